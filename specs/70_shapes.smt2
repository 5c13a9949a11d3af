; Shape laws: the rank and extents of a valid application, so that axioms
; whose guards ask about shapes also apply to terms built during a proof.
; Each is guarded by the validity of the application (see 00_helpers.smt2).

(define-fun same_dims ((y T) (x T)) Bool
  (and (= (rank y) (rank x))
       (or (<= (rank x) 0) (= (dim y 0) (dim x 0))) (or (<= (rank x) 1) (= (dim y 1) (dim x 1)))
       (or (<= (rank x) 2) (= (dim y 2) (dim x 2))) (or (<= (rank x) 3) (= (dim y 3) (dim x 3)))))
(define-fun bdim ((a Int) (b Int)) Int (ite (= a 1) b a))
(define-fun bcast_dims ((z T) (x T) (y T)) Bool
  (and (= (rank z) (rank x))
       (or (<= (rank x) 0) (= (dim z 0) (bdim (dim x 0) (dim y 0))))
       (or (<= (rank x) 1) (= (dim z 1) (bdim (dim x 1) (dim y 1))))
       (or (<= (rank x) 2) (= (dim z 2) (bdim (dim x 2) (dim y 2))))
       (or (<= (rank x) 3) (= (dim z 3) (bdim (dim x 3) (dim y 3))))))
; Output extent of a window (core/shape_inference.cc window_out, ceil_mode 0).
(define-fun wout ((n Int) (eff Int) (s Int) (p (Seq Int)) (i Int)) Int
  (ite (= (seq.nth p 0) 1) (div (+ n s -1) s)
       (+ 1 (div (- (+ n (seq.nth p (+ 1 i)) (seq.nth p (+ 3 i))) eff) s))))

; axiom shape-relu
; test x=f32[2,3]
(assert (forall ((x T))
  (! (=> (dims_ok x) (same_dims (relu x) x)) :pattern ((relu x)))))

; axiom shape-sigmoid
; test x=f32[2,3]
(assert (forall ((x T))
  (! (=> (dims_ok x) (same_dims (sigmoid x) x)) :pattern ((sigmoid x)))))

; axiom shape-tanh
; test x=f32[2,3]
(assert (forall ((x T))
  (! (=> (dims_ok x) (same_dims (tanh x) x)) :pattern ((tanh x)))))

; axiom shape-gelu
; test x=f32[2,3]
(assert (forall ((x T))
  (! (=> (dims_ok x) (same_dims (gelu x) x)) :pattern ((gelu x)))))

; axiom shape-clip
; test lo=0 hi=6 x=f32[2,3]
(assert (forall ((lo Real) (hi Real) (x T))
  (! (=> (and (dims_ok x) (ok_clip lo hi)) (same_dims (clip lo hi x) x)) :pattern ((clip lo hi x)))))

; axiom shape-smul
; test x=f32[2,3,4] s=f32[]
(assert (forall ((x T) (s T))
  (! (=> (and (dims_ok x) (scalar s)) (same_dims (smul x s) x)) :pattern ((smul x s)))))

; axiom shape-add
; test x=f32[2,1] y=f32[2,3]
(assert (forall ((x T) (y T))
  (! (=> (bcast x y) (bcast_dims (add x y) x y)) :pattern ((add x y)))))

; axiom shape-add-vector
; test x=f32[2,3,4] b=f32[4]
(assert (forall ((x T) (b T))
  (! (=> (ok_vec_add x b) (same_dims (add x b) x)) :pattern ((add x b)))))

; axiom shape-mul
; test x=f32[2,1] y=f32[1,3]
(assert (forall ((x T) (y T))
  (! (=> (bcast x y) (bcast_dims (mul x y) x y)) :pattern ((mul x y)))))

; axiom shape-matmul
; test a=1 x=f32[2,3] y=f32[3,4]
(assert (forall ((a Int) (x T) (y T))
  (! (=> (and (ok_mm2 x y) (ok_act a))
         (and (= (rank (matmul a x y)) 2) (= (dim (matmul a x y) 0) (dim x 0))
              (= (dim (matmul a x y) 1) (dim y 1))))
     :pattern ((matmul a x y)))))

; axiom shape-matmul3
; test x=f32[2,3,4] y=f32[4,5]
(assert (forall ((x T) (y T))
  (! (=> (ok_mm3 x y)
         (and (= (rank (matmul 0 x y)) 3) (= (dim (matmul 0 x y) 0) (dim x 0))
              (= (dim (matmul 0 x y) 1) (dim x 1)) (= (dim (matmul 0 x y) 2) (dim y 1))))
     :pattern ((matmul 0 x y)))))

; axiom shape-matmul4
; test x=f32[2,1,3,4] y=f32[4,5]
(assert (forall ((x T) (y T))
  (! (=> (ok_mm4 x y)
         (and (= (rank (matmul 0 x y)) 4) (= (dim (matmul 0 x y) 0) (dim x 0))
              (= (dim (matmul 0 x y) 1) (dim x 1)) (= (dim (matmul 0 x y) 2) (dim x 2))
              (= (dim (matmul 0 x y) 3) (dim y 1))))
     :pattern ((matmul 0 x y)))))

; axiom shape-conv
; test s=[1,1] p=[1,0,0,0,0] d=[1,1] g=1 a=0 x=f32[1,2,5,5] w=f32[3,2,3,3]
; test s=[2,1] p=[2,1,0,0,1] d=[1,2] g=2 a=1 x=f32[2,4,6,6] w=f32[2,2,3,2]
; test s=[2,2] p=[0,0,0,0,0] d=[1,1] g=1 a=0 x=f32[1,2,7,6] w=f32[3,2,3,2]
(assert (forall ((s (Seq Int)) (p (Seq Int)) (d (Seq Int)) (g Int) (a Int) (x T) (w T))
  (! (=> (and (ok_conv s p d g x w) (ok_act a))
         (let ((y (conv2d s p d g a x w)))
           (and (= (rank y) 4) (= (dim y 0) (dim x 0)) (= (dim y 1) (dim w 0))
                (= (dim y 2) (wout (dim x 2) (+ 1 (* (- (dim w 2) 1) (seq.nth d 0))) (seq.nth s 0) p 0))
                (= (dim y 3) (wout (dim x 3) (+ 1 (* (- (dim w 3) 1) (seq.nth d 1))) (seq.nth s 1) p 1)))))
     :pattern ((conv2d s p d g a x w)))))

; axiom shape-concat
; test a=1 r=3 n0=2 n1=3 x=f32[2,2,4] y=f32[2,3,4]
(assert (forall ((a Int) (r Int) (n0 Int) (n1 Int) (x T) (y T))
  (! (=> (ok_concat a r n0 n1 x y)
         (let ((z (concat a r n0 n1 x y)))
           (and (= (rank z) r) (= (dim z a) (+ n0 n1))
                (or (= a 0) (<= r 0) (= (dim z 0) (dim x 0)))
                (or (= a 1) (<= r 1) (= (dim z 1) (dim x 1)))
                (or (= a 2) (<= r 2) (= (dim z 2) (dim x 2)))
                (or (= a 3) (<= r 3) (= (dim z 3) (dim x 3))))))
     :pattern ((concat a r n0 n1 x y)))))

; axiom shape-split
; test a=0 t=5 o=1 l=3 x=f32[5,2,3]
(assert (forall ((a Int) (t Int) (o Int) (l Int) (x T))
  (! (=> (ok_split a t o l x)
         (let ((z (split a t o l x)))
           (and (= (rank z) (rank x)) (= (dim z a) l)
                (or (= a 0) (<= (rank x) 0) (= (dim z 0) (dim x 0)))
                (or (= a 1) (<= (rank x) 1) (= (dim z 1) (dim x 1)))
                (or (= a 2) (<= (rank x) 2) (= (dim z 2) (dim x 2)))
                (or (= a 3) (<= (rank x) 3) (= (dim z 3) (dim x 3))))))
     :pattern ((split a t o l x)))))

; axiom shape-transpose
; test p=[2,0,1] x=f32[2,3,4]
(assert (forall ((p (Seq Int)) (x T))
  (! (=> (ok_perm p x)
         (let ((z (transpose p x)))
           (and (= (rank z) (rank x))
                (or (<= (rank x) 0) (= (dim z 0) (dim x (perm_at p 0))))
                (or (<= (rank x) 1) (= (dim z 1) (dim x (perm_at p 1))))
                (or (<= (rank x) 2) (= (dim z 2) (dim x (perm_at p 2))))
                (or (<= (rank x) 3) (= (dim z 3) (dim x (perm_at p 3)))))))
     :pattern ((transpose p x)))))

; axiom shape-conv-bias
; test s=[1,1] p=[1,0,0,0,0] d=[1,1] g=1 a=0 x=f32[1,2,5,5] w=f32[3,2,3,3] b=f32[3]
; test s=[2,1] p=[2,1,0,0,1] d=[1,2] g=2 a=1 x=f32[2,4,6,6] w=f32[2,2,3,2] b=f32[2]
(assert (forall ((s (Seq Int)) (p (Seq Int)) (d (Seq Int)) (g Int) (a Int) (x T) (w T) (b T))
  (! (=> (and (ok_conv_bias s p d g x w b) (ok_act a))
         (let ((y (conv2d.3 s p d g a x w b)))
           (and (= (rank y) 4) (= (dim y 0) (dim x 0)) (= (dim y 1) (dim w 0))
                (= (dim y 2) (wout (dim x 2) (+ 1 (* (- (dim w 2) 1) (seq.nth d 0))) (seq.nth s 0) p 0))
                (= (dim y 3) (wout (dim x 3) (+ 1 (* (- (dim w 3) 1) (seq.nth d 1))) (seq.nth s 1) p 1)))))
     :pattern ((conv2d.3 s p d g a x w b)))))

; axiom shape-reshape
; test sh=[3,2] x=f32[2,3]
; test sh=[1,4,1,1] x=f32[4]
(assert (forall ((sh (Seq Int)) (x T))
  (! (=> (ok_reshape sh x)
         (let ((z (reshape sh x)))
           (and (= (rank z) (seq.len sh)) (= (dim z 0) (seq.nth sh 0))
                (or (<= (seq.len sh) 1) (= (dim z 1) (seq.nth sh 1)))
                (or (<= (seq.len sh) 2) (= (dim z 2) (seq.nth sh 2)))
                (or (<= (seq.len sh) 3) (= (dim z 3) (seq.nth sh 3))))))
     :pattern ((reshape sh x)))))

; axiom shape-sub
; test x=f32[2,1] y=f32[2,3]
(assert (forall ((x T) (y T))
  (! (=> (bcast x y) (bcast_dims (sub x y) x y)) :pattern ((sub x y)))))

; axiom shape-batchnorm
; test e=2 x=f32[2,3,4,5] sc=f32[3] bi=f32[3] m=f32[3] v=f32[3]
(assert (forall ((e Real) (x T) (sc T) (bi T) (m T) (v T))
  (! (=> (and (rk x 4) (bn_params (dim x 1) sc bi m v)) (same_dims (batchnorm e x sc bi m v) x))
     :pattern ((batchnorm e x sc bi m v)))))
