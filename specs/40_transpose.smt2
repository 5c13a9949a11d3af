; transpose: (transpose perm x), result axis i is axis perm[i] of x. Ranks up
; to 4 (the helpers of 00_helpers.smt2).
; Binary operators need operands of the perm's rank (bcast).

; axiom transpose-compose
; test p=[1,0] q=[1,0] x=f32[2,3]
; test p=[0,2,3,1] q=[3,1,0,2] x=f32[2,3,4,5]
; test p=[2,0,1] q=[0,2,1] x=f32[2,3,4]
(assert (forall ((p (Seq Int)) (q (Seq Int)) (x T))
  (! (=> (and (ok_perm p x) (ok_perm q x))
         (= (transpose q (transpose p x)) (transpose (perm_compose p q) x)))
     :pattern ((transpose q (transpose p x))))))

; axiom transpose-identity
; test p=[0,1] x=f32[2,3]
; test p=[0,1,2,3] x=f32[2,3,4,5]
(assert (forall ((p (Seq Int)) (x T))
  (! (=> (and (ok_perm p x) (is_identity_perm p)) (= (transpose p x) x)) :pattern ((transpose p x)))))

; axiom transpose-relu
; test p=[1,0] x=f32[2,3]
(assert (forall ((p (Seq Int)) (x T))
  (! (=> (ok_perm p x) (= (transpose p (relu x)) (relu (transpose p x))))
     :pattern ((transpose p (relu x))) :pattern ((relu (transpose p x))))))

; axiom transpose-sigmoid
; test p=[1,0] x=f32[2,3]
(assert (forall ((p (Seq Int)) (x T))
  (! (=> (ok_perm p x) (= (transpose p (sigmoid x)) (sigmoid (transpose p x))))
     :pattern ((transpose p (sigmoid x))) :pattern ((sigmoid (transpose p x))))))

; axiom transpose-tanh
; test p=[1,0] x=f32[2,3]
(assert (forall ((p (Seq Int)) (x T))
  (! (=> (ok_perm p x) (= (transpose p (tanh x)) (tanh (transpose p x))))
     :pattern ((transpose p (tanh x))) :pattern ((tanh (transpose p x))))))

; axiom transpose-smul
; test p=[2,0,1] x=f32[2,3,4] s=f32[]
(assert (forall ((p (Seq Int)) (x T) (s T))
  (! (=> (and (ok_perm p x) (scalar s)) (= (transpose p (smul x s)) (smul (transpose p x) s)))
     :pattern ((transpose p (smul x s))) :pattern ((smul (transpose p x) s)))))

; Elementwise binary operators, when both operands have the perm's rank.
; axiom transpose-add
; test p=[1,0] x=f32[2,3] y=f32[2,3]
; test p=[2,0,1] x=f32[2,1,4] y=f32[1,3,4]
(assert (forall ((p (Seq Int)) (x T) (y T))
  (! (=> (and (ok_perm p x) (bcast x y))
         (= (transpose p (add x y)) (add (transpose p x) (transpose p y))))
     :pattern ((transpose p (add x y))) :pattern ((add (transpose p x) (transpose p y))))))

; axiom transpose-mul
; test p=[1,0] x=f32[2,3] y=f32[2,3]
; test p=[2,0,1] x=f32[2,1,4] y=f32[1,3,4]
(assert (forall ((p (Seq Int)) (x T) (y T))
  (! (=> (and (ok_perm p x) (bcast x y))
         (= (transpose p (mul x y)) (mul (transpose p x) (transpose p y))))
     :pattern ((transpose p (mul x y))) :pattern ((mul (transpose p x) (transpose p y))))))

; Data movement: axis a of x moves to position perm_index(p, a).
; axiom transpose-concat
; test p=[1,0] a=0 r=2 n0=1 n1=2 x=f32[1,3] y=f32[2,3]
; test p=[2,0,3,1] a=3 r=4 n0=2 n1=1 x=f32[1,2,3,2] y=f32[1,2,3,1]
(assert (forall ((p (Seq Int)) (a Int) (r Int) (n0 Int) (n1 Int) (x T) (y T))
  (! (=> (and (ok_perm p x) (ok_concat a r n0 n1 x y))
         (= (transpose p (concat a r n0 n1 x y))
            (concat (perm_index p a) r n0 n1 (transpose p x) (transpose p y))))
     :pattern ((transpose p (concat a r n0 n1 x y))))))

; axiom transpose-split
; test p=[1,0] a=0 t=3 o=1 l=2 x=f32[3,4]
; test p=[0,3,1,2] a=2 t=5 o=0 l=2 x=f32[1,2,5,3]
(assert (forall ((p (Seq Int)) (a Int) (t Int) (o Int) (l Int) (x T))
  (! (=> (and (ok_perm p x) (ok_split a t o l x))
         (= (transpose p (split a t o l x)) (split (perm_index p a) t o l (transpose p x))))
     :pattern ((transpose p (split a t o l x))))))
