; Data movement along an axis: (concat axis rank n0 n1 x y) stacks x (extent
; n0 along axis) and y (extent n1); (split axis total offset length x) is the
; slice [offset, offset+length) along axis of x, whose extent is total.

; axiom split-whole
; test a=1 t=3 x=f32[2,3]
(assert (forall ((a Int) (t Int) (x T))
  (! (=> (ok_split a t 0 t x) (= (split a t 0 t x) x)) :pattern ((split a t 0 t x)))))

; axiom split-split
; test a=1 t=6 o=1 l=4 o2=1 l2=2 x=f32[2,6]
(assert (forall ((a Int) (t Int) (o Int) (l Int) (o2 Int) (l2 Int) (x T))
  (! (=> (and (ok_split a t o l x) (>= o2 0) (>= l2 1) (<= (+ o2 l2) l))
         (= (split a l o2 l2 (split a t o l x)) (split a t (+ o o2) l2 x)))
     :pattern ((split a l o2 l2 (split a t o l x))))))

; axiom split-concat-first
; test a=0 r=2 t=5 n0=2 n1=3 o=0 l=2 x=f32[2,4] y=f32[3,4]
; test a=1 r=3 t=4 n0=3 n1=1 o=1 l=1 x=f32[2,3,2] y=f32[2,1,2]
(assert (forall ((a Int) (r Int) (t Int) (n0 Int) (n1 Int) (o Int) (l Int) (x T) (y T))
  (! (=> (and (ok_concat a r n0 n1 x y) (= t (+ n0 n1)) (>= o 0) (>= l 1) (<= (+ o l) n0))
         (= (split a t o l (concat a r n0 n1 x y)) (split a n0 o l x)))
     :pattern ((split a t o l (concat a r n0 n1 x y))))))

; axiom split-concat-second
; test a=0 r=2 t=5 n0=2 n1=3 o=2 l=3 x=f32[2,4] y=f32[3,4]
; test a=1 r=3 t=4 n0=1 n1=3 o=2 l=2 x=f32[2,1,2] y=f32[2,3,2]
(assert (forall ((a Int) (r Int) (t Int) (n0 Int) (n1 Int) (o Int) (l Int) (x T) (y T))
  (! (=> (and (ok_concat a r n0 n1 x y) (= t (+ n0 n1)) (>= o n0) (>= l 1) (<= (+ o l) t))
         (= (split a t o l (concat a r n0 n1 x y)) (split a n1 (- o n0) l y)))
     :pattern ((split a t o l (concat a r n0 n1 x y))))))

; axiom split-concat-other-axis
; test a=0 b=1 r=2 t=4 n0=2 n1=1 o=1 l=2 x=f32[2,4] y=f32[1,4]
(assert (forall ((a Int) (b Int) (r Int) (t Int) (n0 Int) (n1 Int) (o Int) (l Int) (x T) (y T))
  (! (=> (and (not (= a b)) (ok_concat a r n0 n1 x y) (ok_split b t o l x))
         (= (split b t o l (concat a r n0 n1 x y))
            (concat a r n0 n1 (split b t o l x) (split b t o l y))))
     :pattern ((split b t o l (concat a r n0 n1 x y))))))

; Adjacent slices of one tensor concatenate into the slice that covers both.
; axiom concat-adjacent-splits
; test a=1 r=2 t=5 o=0 l1=2 o2=2 l2=3 x=f32[2,5]
; test a=0 r=3 t=6 o=1 l1=1 o2=2 l2=3 x=f32[6,2,2]
(assert (forall ((a Int) (r Int) (t Int) (o Int) (l1 Int) (o2 Int) (l2 Int) (x T))
  (! (=> (and (= o2 (+ o l1)) (ok_split a t o l1 x) (ok_split a t o2 l2 x) (= r (rank x)))
         (= (concat a r l1 l2 (split a t o l1 x) (split a t o2 l2 x)) (split a t o (+ l1 l2) x)))
     :pattern ((concat a r l1 l2 (split a t o l1 x) (split a t o2 l2 x))))))

; axiom concat-assoc
; test a=1 r=2 m=3 n0=1 n1=2 n2=2 x=f32[2,1] y=f32[2,2] z=f32[2,2]
(assert (forall ((a Int) (r Int) (m Int) (n0 Int) (n1 Int) (n2 Int) (x T) (y T) (z T))
  (! (=> (and (= m (+ n0 n1)) (ok_concat a r n0 n1 x y) (ok_concat a r n1 n2 y z))
         (= (concat a r m n2 (concat a r n0 n1 x y) z)
            (concat a r n0 (+ n1 n2) x (concat a r n1 n2 y z))))
     :pattern ((concat a r m n2 (concat a r n0 n1 x y) z)))))

; axiom concat-assoc-right
; test a=1 r=2 m=4 n0=1 n1=2 n2=2 x=f32[2,1] y=f32[2,2] z=f32[2,2]
(assert (forall ((a Int) (r Int) (m Int) (n0 Int) (n1 Int) (n2 Int) (x T) (y T) (z T))
  (! (=> (and (= m (+ n1 n2)) (ok_concat a r n0 n1 x y) (ok_concat a r n1 n2 y z))
         (= (concat a r n0 m x (concat a r n1 n2 y z))
            (concat a r (+ n0 n1) n2 (concat a r n0 n1 x y) z)))
     :pattern ((concat a r n0 m x (concat a r n1 n2 y z))))))

; Concatenations along two different axes interchange.
; axiom concat-interchange
; test a=0 b=1 r=2 m0=1 m1=2 n0=2 n1=3 k0=2 k1=3 x=f32[1,2] y=f32[1,3] z=f32[2,2] w=f32[2,3]
(assert (forall ((a Int) (b Int) (r Int) (m0 Int) (m1 Int) (n0 Int) (n1 Int) (k0 Int) (k1 Int)
                 (x T) (y T) (z T) (w T))
  (! (=> (and (not (= a b)) (= n0 k0) (= n1 k1) (ok_concat b r n0 n1 x y)
              (ok_concat b r k0 k1 z w) (ok_concat a r m0 m1 x z) (ok_concat a r m0 m1 y w))
         (= (concat a r m0 m1 (concat b r n0 n1 x y) (concat b r k0 k1 z w))
            (concat b r n0 n1 (concat a r m0 m1 x z) (concat a r m0 m1 y w))))
     :pattern ((concat a r m0 m1 (concat b r n0 n1 x y) (concat b r k0 k1 z w))))))

; Elementwise operators act part by part.
; axiom concat-relu
; test a=1 r=2 n0=1 n1=2 x=f32[2,1] y=f32[2,2]
(assert (forall ((a Int) (r Int) (n0 Int) (n1 Int) (x T) (y T))
  (! (=> (ok_concat a r n0 n1 x y)
         (= (relu (concat a r n0 n1 x y)) (concat a r n0 n1 (relu x) (relu y))))
     :pattern ((relu (concat a r n0 n1 x y))) :pattern ((concat a r n0 n1 (relu x) (relu y))))))

; axiom concat-sigmoid
; test a=1 r=2 n0=1 n1=2 x=f32[2,1] y=f32[2,2]
(assert (forall ((a Int) (r Int) (n0 Int) (n1 Int) (x T) (y T))
  (! (=> (ok_concat a r n0 n1 x y)
         (= (sigmoid (concat a r n0 n1 x y)) (concat a r n0 n1 (sigmoid x) (sigmoid y))))
     :pattern ((sigmoid (concat a r n0 n1 x y)))
     :pattern ((concat a r n0 n1 (sigmoid x) (sigmoid y))))))

; axiom concat-tanh
; test a=1 r=2 n0=1 n1=2 x=f32[2,1] y=f32[2,2]
(assert (forall ((a Int) (r Int) (n0 Int) (n1 Int) (x T) (y T))
  (! (=> (ok_concat a r n0 n1 x y)
         (= (tanh (concat a r n0 n1 x y)) (concat a r n0 n1 (tanh x) (tanh y))))
     :pattern ((tanh (concat a r n0 n1 x y))) :pattern ((concat a r n0 n1 (tanh x) (tanh y))))))

; axiom concat-smul
; test a=0 r=3 n0=1 n1=2 x=f32[1,2,2] y=f32[2,2,2] s=f32[]
(assert (forall ((a Int) (r Int) (n0 Int) (n1 Int) (x T) (y T) (s T))
  (! (=> (and (ok_concat a r n0 n1 x y) (scalar s))
         (= (smul (concat a r n0 n1 x y) s) (concat a r n0 n1 (smul x s) (smul y s))))
     :pattern ((smul (concat a r n0 n1 x y) s))
     :pattern ((concat a r n0 n1 (smul x s) (smul y s))))))

; Binary elementwise operators on two concatenations cut at the same place
; (equal ranks, so broadcasting aligns the axes).
; axiom concat-add
; test a=1 r=2 n0=1 n1=2 m0=1 m1=2 x1=f32[2,1] y1=f32[2,2] x2=f32[1,1] y2=f32[1,2]
(assert (forall ((a Int) (r Int) (n0 Int) (n1 Int) (m0 Int) (m1 Int) (x1 T) (y1 T) (x2 T) (y2 T))
  (! (=> (and (= n0 m0) (= n1 m1) (ok_concat a r n0 n1 x1 y1) (ok_concat a r m0 m1 x2 y2)
              (bcast x1 x2) (bcast y1 y2))
         (= (add (concat a r n0 n1 x1 y1) (concat a r m0 m1 x2 y2))
            (concat a r n0 n1 (add x1 x2) (add y1 y2))))
     :pattern ((add (concat a r n0 n1 x1 y1) (concat a r m0 m1 x2 y2))))))

; A concatenation along the last axis plus a vector bias concatenated at the
; same place (broadcasting aligns the bias with the last axis).
; axiom concat-add-vector
; test a=2 r=3 n0=2 n1=3 x1=f32[2,4,2] y1=f32[2,4,3] b1=f32[2] b2=f32[3]
; test a=1 r=2 n0=1 n1=2 x1=f32[3,1] y1=f32[3,2] b1=f32[1] b2=f32[2]
(assert (forall ((a Int) (r Int) (n0 Int) (n1 Int) (x1 T) (y1 T) (b1 T) (b2 T))
  (! (=> (and (= a (- r 1)) (ok_concat a r n0 n1 x1 y1) (ok_concat 0 1 n0 n1 b1 b2))
         (= (add (concat a r n0 n1 x1 y1) (concat 0 1 n0 n1 b1 b2))
            (concat a r n0 n1 (add x1 b1) (add y1 b2))))
     :pattern ((add (concat a r n0 n1 x1 y1) (concat 0 1 n0 n1 b1 b2))))))

; axiom concat-mul
; test a=1 r=2 n0=1 n1=2 m0=1 m1=2 x1=f32[2,1] y1=f32[2,2] x2=f32[1,1] y2=f32[1,2]
(assert (forall ((a Int) (r Int) (n0 Int) (n1 Int) (m0 Int) (m1 Int) (x1 T) (y1 T) (x2 T) (y2 T))
  (! (=> (and (= n0 m0) (= n1 m1) (ok_concat a r n0 n1 x1 y1) (ok_concat a r m0 m1 x2 y2)
              (bcast x1 x2) (bcast y1 y2))
         (= (mul (concat a r n0 n1 x1 y1) (concat a r m0 m1 x2 y2))
            (concat a r n0 n1 (mul x1 x2) (mul y1 y2))))
     :pattern ((mul (concat a r n0 n1 x1 y1) (concat a r m0 m1 x2 y2))))))

; Slices of elementwise results.
; axiom split-relu
; test a=1 t=3 o=1 l=2 x=f32[2,3]
(assert (forall ((a Int) (t Int) (o Int) (l Int) (x T))
  (! (=> (ok_split a t o l x) (= (split a t o l (relu x)) (relu (split a t o l x))))
     :pattern ((split a t o l (relu x))) :pattern ((relu (split a t o l x))))))

; axiom split-sigmoid
; test a=1 t=3 o=1 l=2 x=f32[2,3]
(assert (forall ((a Int) (t Int) (o Int) (l Int) (x T))
  (! (=> (ok_split a t o l x) (= (split a t o l (sigmoid x)) (sigmoid (split a t o l x))))
     :pattern ((split a t o l (sigmoid x))) :pattern ((sigmoid (split a t o l x))))))

; axiom split-tanh
; test a=1 t=3 o=1 l=2 x=f32[2,3]
(assert (forall ((a Int) (t Int) (o Int) (l Int) (x T))
  (! (=> (ok_split a t o l x) (= (split a t o l (tanh x)) (tanh (split a t o l x))))
     :pattern ((split a t o l (tanh x))) :pattern ((tanh (split a t o l x))))))

; axiom split-smul
; test a=0 t=3 o=0 l=1 x=f32[3,2] s=f32[]
(assert (forall ((a Int) (t Int) (o Int) (l Int) (x T) (s T))
  (! (=> (and (ok_split a t o l x) (scalar s))
         (= (split a t o l (smul x s)) (smul (split a t o l x) s)))
     :pattern ((split a t o l (smul x s))) :pattern ((smul (split a t o l x) s)))))

; axiom split-add
; test a=1 t=3 o=1 l=2 x=f32[2,3] y=f32[2,3]
; test a=0 t=3 o=0 l=2 x=f32[3,1] y=f32[3,4]
(assert (forall ((a Int) (t Int) (o Int) (l Int) (x T) (y T))
  (! (=> (and (ok_split a t o l x) (ok_split a t o l y) (bcast x y))
         (= (add (split a t o l x) (split a t o l y)) (split a t o l (add x y))))
     :pattern ((add (split a t o l x) (split a t o l y))))))

; axiom split-mul
; test a=1 t=3 o=1 l=2 x=f32[2,3] y=f32[2,3]
(assert (forall ((a Int) (t Int) (o Int) (l Int) (x T) (y T))
  (! (=> (and (ok_split a t o l x) (ok_split a t o l y) (bcast x y))
         (= (mul (split a t o l x) (split a t o l y)) (split a t o l (mul x y))))
     :pattern ((mul (split a t o l x) (split a t o l y))))))

; Slices of a convolution: along the batch, and (groups = 1) along C_out,
; which slices the weight.
; axiom split-conv-batch
; test s=[1,1] p=[1,0,0,0,0] d=[1,1] g=1 c=0 t=3 o=1 l=2 x=f32[3,2,5,5] w=f32[2,2,3,3]
(assert (forall ((s (Seq Int)) (p (Seq Int)) (d (Seq Int)) (g Int) (c Int) (t Int) (o Int) (l Int)
                 (x T) (w T))
  (! (=> (and (ok_conv s p d g x w) (ok_split 0 t o l x) (ok_act c))
         (= (split 0 t o l (conv2d s p d g c x w)) (conv2d s p d g c (split 0 t o l x) w)))
     :pattern ((split 0 t o l (conv2d s p d g c x w))))))

; axiom split-conv-channels
; test s=[2,2] p=[0,0,0,0,0] d=[1,1] c=1 t=4 o=1 l=2 x=f32[1,2,6,6] w=f32[4,2,3,3]
(assert (forall ((s (Seq Int)) (p (Seq Int)) (d (Seq Int)) (c Int) (t Int) (o Int) (l Int)
                 (x T) (w T))
  (! (=> (and (ok_conv s p d 1 x w) (ok_split 0 t o l w) (ok_act c))
         (= (split 1 t o l (conv2d s p d 1 c x w)) (conv2d s p d 1 c x (split 0 t o l w))))
     :pattern ((split 1 t o l (conv2d s p d 1 c x w))))))
