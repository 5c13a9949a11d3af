; matmul (numpy matmul; here matrices) with its fused activation
; (act: none 0, relu 1, sigmoid 2, tanh 3, gelu 4; a fused clip is
; (matmul_clip lo hi x y)). The activation applies elementwise to the
; product, so its laws hold for a batch of matrices of any rank by one
; matrix (ok_mmb).

; axiom matmul-relu
; test x=f32[2,3] y=f32[3,4]
; test x=f32[2,2,3] y=f32[3,4]
; test x=f32[2,1,2,3] y=f32[3,2]
(assert (forall ((x T) (y T))
  (! (=> (ok_mmb x y) (= (matmul 1 x y) (relu (matmul 0 x y))))
     :pattern ((matmul 1 x y)) :pattern ((relu (matmul 0 x y))))))

; axiom matmul-sigmoid
; test x=f32[2,3] y=f32[3,4]
; test x=f32[2,2,3] y=f32[3,4]
; test x=f32[2,1,2,3] y=f32[3,2]
(assert (forall ((x T) (y T))
  (! (=> (ok_mmb x y) (= (matmul 2 x y) (sigmoid (matmul 0 x y))))
     :pattern ((matmul 2 x y)) :pattern ((sigmoid (matmul 0 x y))))))

; axiom matmul-tanh
; test x=f32[2,3] y=f32[3,4]
; test x=f32[2,2,3] y=f32[3,4]
; test x=f32[2,1,2,3] y=f32[3,2]
(assert (forall ((x T) (y T))
  (! (=> (ok_mmb x y) (= (matmul 3 x y) (tanh (matmul 0 x y))))
     :pattern ((matmul 3 x y)) :pattern ((tanh (matmul 0 x y))))))

; axiom matmul-gelu
; test x=f32[2,3] y=f32[3,4]
; test x=f32[2,2,3] y=f32[3,4]
; test x=f32[2,1,2,3] y=f32[3,2]
(assert (forall ((x T) (y T))
  (! (=> (ok_mmb x y) (= (matmul 4 x y) (gelu (matmul 0 x y))))
     :pattern ((matmul 4 x y)) :pattern ((gelu (matmul 0 x y))))))

; axiom matmul-clip
; test lo=0 hi=6 x=f32[2,3] y=f32[3,4]
; test lo=-1 hi=1 x=f32[3,2] y=f32[2,2]
; test lo=0 hi=6 x=f32[1,2,3] y=f32[3,4]
; test lo=-1 hi=2 x=f32[2,1,2,3] y=f32[3,2]
(assert (forall ((lo Real) (hi Real) (x T) (y T))
  (! (=> (and (ok_mmb x y) (ok_clip lo hi)) (= (matmul_clip lo hi x y) (clip lo hi (matmul 0 x y))))
     :pattern ((matmul_clip lo hi x y)) :pattern ((clip lo hi (matmul 0 x y))))))

; axiom matmul-assoc
; test x=f32[2,3] y=f32[3,4] z=f32[4,5]
(assert (forall ((x T) (y T) (z T))
  (! (=> (and (ok_mm2 x y) (ok_mm2 y z))
         (= (matmul 0 (matmul 0 x y) z) (matmul 0 x (matmul 0 y z))))
     :pattern ((matmul 0 (matmul 0 x y) z)) :pattern ((matmul 0 x (matmul 0 y z))))))

; axiom matmul-add-right
; test x=f32[2,3] y=f32[3,4] z=f32[3,4]
; test x=f32[2,3] y=f32[3,4] z=f32[3,1]
(assert (forall ((x T) (y T) (z T))
  (! (=> (and (ok_mm2 x y) (ok_mm2 x z) (bcast y z))
         (= (matmul 0 x (add y z)) (add (matmul 0 x y) (matmul 0 x z))))
     :pattern ((matmul 0 x (add y z))) :pattern ((add (matmul 0 x y) (matmul 0 x z))))))

; axiom matmul-add-left
; test x=f32[2,3] y=f32[2,3] z=f32[3,4]
; test x=f32[2,3] y=f32[1,3] z=f32[3,4]
(assert (forall ((x T) (y T) (z T))
  (! (=> (and (ok_mm2 x z) (ok_mm2 y z) (bcast x y))
         (= (matmul 0 (add x y) z) (add (matmul 0 x z) (matmul 0 y z))))
     :pattern ((matmul 0 (add x y) z)) :pattern ((add (matmul 0 x z) (matmul 0 y z))))))

; axiom matmul-smul-right
; test x=f32[2,3] y=f32[3,4] s=f32[]
(assert (forall ((x T) (y T) (s T))
  (! (=> (and (ok_mm2 x y) (scalar s)) (= (matmul 0 x (smul y s)) (smul (matmul 0 x y) s)))
     :pattern ((matmul 0 x (smul y s))) :pattern ((smul (matmul 0 x y) s)))))

; axiom matmul-smul-left
; test x=f32[2,3] y=f32[3,4] s=f32[]
(assert (forall ((x T) (y T) (s T))
  (! (=> (and (ok_mm2 x y) (scalar s)) (= (matmul 0 (smul x s) y) (smul (matmul 0 x y) s)))
     :pattern ((matmul 0 (smul x s) y)))))

; (A B)^T = B^T A^T.
; A batch of matrices by one matrix (a transformer's projection).
; axiom matmul3-smul-right
; test x=f32[2,3,4] y=f32[4,5] s=f32[]
(assert (forall ((x T) (y T) (s T))
  (! (=> (and (ok_mm3 x y) (scalar s)) (= (matmul 0 x (smul y s)) (smul (matmul 0 x y) s)))
     :pattern ((matmul 0 x (smul y s))) :pattern ((smul (matmul 0 x y) s)))))

; axiom matmul-transpose
; test x=f32[2,3] y=f32[3,4]
(assert (forall ((x T) (y T))
  (! (=> (ok_mm2 x y)
         (= (transpose (s2 1 0) (matmul 0 x y))
            (matmul 0 (transpose (s2 1 0) y) (transpose (s2 1 0) x))))
     :pattern ((transpose (s2 1 0) (matmul 0 x y)))
     :pattern ((matmul 0 (transpose (s2 1 0) y) (transpose (s2 1 0) x))))))

; axiom matmul-eye-right
; test x=f32[2,3] sh=[3,3]
(assert (forall ((x T) (sh (Seq Int)))
  (! (=> (and (rk x 2) (= (seq.len sh) 2) (= (seq.nth sh 0) (dim x 1))
              (= (seq.nth sh 1) (dim x 1)))
         (= (matmul 0 x (const_eye sh)) x))
     :pattern ((matmul 0 x (const_eye sh))))))

; axiom matmul-eye-left
; test x=f32[3,2] sh=[3,3]
(assert (forall ((x T) (sh (Seq Int)))
  (! (=> (and (rk x 2) (= (seq.len sh) 2) (= (seq.nth sh 0) (dim x 0))
              (= (seq.nth sh 1) (dim x 0)))
         (= (matmul 0 (const_eye sh) x) x))
     :pattern ((matmul 0 (const_eye sh) x)))))

; Concatenation along the rows of the left operand or the columns of the
; right one.
; axiom matmul-concat-rows
; test n0=1 n1=2 x=f32[1,3] y=f32[2,3] z=f32[3,4]
(assert (forall ((n0 Int) (n1 Int) (x T) (y T) (z T))
  (! (=> (and (ok_concat 0 2 n0 n1 x y) (ok_mm2 x z))
         (= (matmul 0 (concat 0 2 n0 n1 x y) z)
            (concat 0 2 n0 n1 (matmul 0 x z) (matmul 0 y z))))
     :pattern ((matmul 0 (concat 0 2 n0 n1 x y) z)))))

; axiom matmul-concat-cols
; test n0=1 n1=3 x=f32[2,3] y=f32[3,1] z=f32[3,3]
(assert (forall ((n0 Int) (n1 Int) (x T) (y T) (z T))
  (! (=> (and (ok_concat 1 2 n0 n1 y z) (ok_mm2 x y))
         (= (matmul 0 x (concat 1 2 n0 n1 y z))
            (concat 1 2 n0 n1 (matmul 0 x y) (matmul 0 x z))))
     :pattern ((matmul 0 x (concat 1 2 n0 n1 y z))))))

; Concatenation along the inner dimension of both operands, cut at the same place.
; axiom matmul-concat-inner
; test n0=2 n1=1 m0=2 m1=1 x1=f32[4,2] x2=f32[4,1] y1=f32[2,3] y2=f32[1,3]
(assert (forall ((n0 Int) (n1 Int) (m0 Int) (m1 Int) (x1 T) (x2 T) (y1 T) (y2 T))
  (! (=> (and (ok_concat 1 2 n0 n1 x1 x2) (ok_concat 0 2 m0 m1 y1 y2) (= n0 m0) (= n1 m1))
         (= (matmul 0 (concat 1 2 n0 n1 x1 x2) (concat 0 2 m0 m1 y1 y2))
            (add (matmul 0 x1 y1) (matmul 0 x2 y2))))
     :pattern ((matmul 0 (concat 1 2 n0 n1 x1 x2) (concat 0 2 m0 m1 y1 y2))))))

; A batch of matrices times a matrix whose columns are concatenated: the
; products concatenated along the last axis.
; axiom matmul3-concat-cols
; test n0=2 n1=3 x=f32[2,3,4] y=f32[4,2] z=f32[4,3]
(assert (forall ((n0 Int) (n1 Int) (x T) (y T) (z T))
  (! (=> (and (ok_concat 1 2 n0 n1 y z) (ok_mm3 x y))
         (= (matmul 0 x (concat 1 2 n0 n1 y z))
            (concat 2 3 n0 n1 (matmul 0 x y) (matmul 0 x z))))
     :pattern ((matmul 0 x (concat 1 2 n0 n1 y z))))))

; The same for a rank-4 batch (a projection lifted to rank 4).
; axiom matmul4-concat-cols
; test n0=2 n1=3 x=f32[2,1,3,4] y=f32[4,2] z=f32[4,3]
(assert (forall ((n0 Int) (n1 Int) (x T) (y T) (z T))
  (! (=> (and (ok_concat 1 2 n0 n1 y z) (ok_mm4 x y))
         (= (matmul 0 x (concat 1 2 n0 n1 y z))
            (concat 3 4 n0 n1 (matmul 0 x y) (matmul 0 x z))))
     :pattern ((matmul 0 x (concat 1 2 n0 n1 y z))))))
