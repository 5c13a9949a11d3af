; matmul (numpy matmul: last two axes, broadcast batch axes) with its fused
; activation (act: none 0, relu 1, sigmoid 2, tanh 3).

; axiom matmul-relu
; test x=f32[2,3] y=f32[3,4]
(assert (forall ((x T) (y T))
  (! (= (matmul 1 x y) (relu (matmul 0 x y)))
     :pattern ((matmul 1 x y)) :pattern ((relu (matmul 0 x y))))))

; axiom matmul-sigmoid
; test x=f32[2,3] y=f32[3,4]
(assert (forall ((x T) (y T))
  (! (= (matmul 2 x y) (sigmoid (matmul 0 x y)))
     :pattern ((matmul 2 x y)) :pattern ((sigmoid (matmul 0 x y))))))

; axiom matmul-tanh
; test x=f32[2,3] y=f32[3,4]
(assert (forall ((x T) (y T))
  (! (= (matmul 3 x y) (tanh (matmul 0 x y)))
     :pattern ((matmul 3 x y)) :pattern ((tanh (matmul 0 x y))))))

; axiom matmul-assoc
; test x=f32[2,3] y=f32[3,4] z=f32[4,5]
; test x=f32[2,2,3] y=f32[3,4] z=f32[1,4,2]
(assert (forall ((x T) (y T) (z T))
  (! (= (matmul 0 (matmul 0 x y) z) (matmul 0 x (matmul 0 y z)))
     :pattern ((matmul 0 (matmul 0 x y) z)) :pattern ((matmul 0 x (matmul 0 y z))))))

; axiom matmul-add-right
; test x=f32[2,3] y=f32[3,4] z=f32[3,4]
; test x=f32[2,3] y=f32[3,4] z=f32[3,1]
(assert (forall ((x T) (y T) (z T))
  (! (= (matmul 0 x (add y z)) (add (matmul 0 x y) (matmul 0 x z)))
     :pattern ((matmul 0 x (add y z))) :pattern ((add (matmul 0 x y) (matmul 0 x z))))))

; axiom matmul-add-left
; test x=f32[2,3] y=f32[2,3] z=f32[3,4]
; test x=f32[2,3] y=f32[1,3] z=f32[3,4]
(assert (forall ((x T) (y T) (z T))
  (! (= (matmul 0 (add x y) z) (add (matmul 0 x z) (matmul 0 y z)))
     :pattern ((matmul 0 (add x y) z)) :pattern ((add (matmul 0 x z) (matmul 0 y z))))))

; axiom matmul-smul-right
; test x=f32[2,3] y=f32[3,4] s=f32[]
(assert (forall ((x T) (y T) (s T))
  (! (= (matmul 0 x (smul y s)) (smul (matmul 0 x y) s))
     :pattern ((matmul 0 x (smul y s))) :pattern ((smul (matmul 0 x y) s)))))

; axiom matmul-smul-left
; test x=f32[2,3] y=f32[3,4] s=f32[]
(assert (forall ((x T) (y T) (s T))
  (! (= (matmul 0 (smul x s) y) (smul (matmul 0 x y) s))
     :pattern ((matmul 0 (smul x s) y)))))

; (A B)^T = B^T A^T for matrices, and for stacks of them when neither
; operand broadcasts.
; axiom matmul-transpose-2d
; test x=f32[2,3] y=f32[3,4]
(assert (forall ((x T) (y T))
  (! (=> (and (= (rank x) 2) (= (rank y) 2))
         (= (transpose (s2 1 0) (matmul 0 x y))
            (matmul 0 (transpose (s2 1 0) y) (transpose (s2 1 0) x))))
     :pattern ((transpose (s2 1 0) (matmul 0 x y)))
     :pattern ((matmul 0 (transpose (s2 1 0) y) (transpose (s2 1 0) x))))))

; axiom matmul-eye-right
; test x=f32[2,3] sh=[3,3]
; test x=f32[2,2,3] sh=[3,3]
(assert (forall ((x T) (sh (Seq Int)))
  (! (= (matmul 0 x (const_eye sh)) x) :pattern ((matmul 0 x (const_eye sh))))))

; axiom matmul-eye-left
; test x=f32[3,2] sh=[3,3]
; test x=f32[2,3,4] sh=[3,3]
(assert (forall ((x T) (sh (Seq Int)))
  (! (= (matmul 0 (const_eye sh) x) x) :pattern ((matmul 0 (const_eye sh) x)))))

; Concatenation along the rows of the left operand or the columns of the
; right one; r is the concat's rank, the result's rank must be r too.
; axiom matmul-concat-rows
; test a=0 r=2 n0=1 n1=2 x=f32[1,3] y=f32[2,3] z=f32[3,4]
; test a=1 r=3 n0=2 n1=1 x=f32[2,2,3] y=f32[2,1,3] z=f32[3,4]
(assert (forall ((a Int) (r Int) (n0 Int) (n1 Int) (x T) (y T) (z T))
  (! (=> (and (= a (- r 2)) (<= (rank z) r))
         (= (matmul 0 (concat a r n0 n1 x y) z)
            (concat a r n0 n1 (matmul 0 x z) (matmul 0 y z))))
     :pattern ((matmul 0 (concat a r n0 n1 x y) z)))))

; axiom matmul-concat-cols
; test a=1 r=2 n0=1 n1=3 x=f32[2,3] y=f32[3,1] z=f32[3,3]
; test a=2 r=3 n0=2 n1=2 x=f32[2,3] y=f32[2,3,2] z=f32[2,3,2]
(assert (forall ((a Int) (r Int) (n0 Int) (n1 Int) (x T) (y T) (z T))
  (! (=> (and (= a (- r 1)) (<= (rank x) r))
         (= (matmul 0 x (concat a r n0 n1 y z))
            (concat a r n0 n1 (matmul 0 x y) (matmul 0 x z))))
     :pattern ((matmul 0 x (concat a r n0 n1 y z))))))

; Concatenation along the inner dimension of both operands, cut at the same place.
; axiom matmul-concat-inner
; test a=1 r=2 n0=2 n1=1 b=0 q=2 m0=2 m1=1 x1=f32[4,2] x2=f32[4,1] y1=f32[2,3] y2=f32[1,3]
; test a=2 r=3 n0=1 n1=3 b=0 q=2 m0=1 m1=3 x1=f32[2,4,1] x2=f32[2,4,3] y1=f32[1,3] y2=f32[3,3]
(assert (forall ((a Int) (r Int) (n0 Int) (n1 Int) (b Int) (q Int) (m0 Int) (m1 Int)
                 (x1 T) (x2 T) (y1 T) (y2 T))
  (! (=> (and (= a (- r 1)) (= b (- q 2)) (= n0 m0) (= n1 m1))
         (= (matmul 0 (concat a r n0 n1 x1 x2) (concat b q m0 m1 y1 y2))
            (add (matmul 0 x1 y1) (matmul 0 x2 y2))))
     :pattern ((matmul 0 (concat a r n0 n1 x1 x2) (concat b q m0 m1 y1 y2))))))
