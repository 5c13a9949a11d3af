; batchnorm in inference: (batchnorm eps x scale bias mean var) is
; (x - mean[c]) * scale[c] / sqrt(var[c] + eps) + bias[c] on channel c (axis 1).
; Per channel it is affine, x * k + t, with weight-only factors written with
; batchnorm itself on [1,C,1,1] constants, as folding rules build them:
;   k = (batchnorm eps ones scale zero zero var)   ones = (const_ones [1,C,1,1])
;   t = (batchnorm eps (sub ones ones) scale bias mean var),   zero = (sub mean mean).
; Tests use eps = 2 so that var + eps > 0 for inputs drawn from (-1, 1).

; The input is a convolution's output (the folding rules' case): a general
; trigger would also fire on the factors themselves, whose zero vector
; (sub m m) it rewrites into (sub (sub m m) (sub m m)), without end.

(define-fun bn_ones ((c Int)) T (const_ones (s4 1 c 1 1)))
(define-fun bn_k ((e Real) (c Int) (sc T) (m T) (v T)) T
  (batchnorm e (bn_ones c) sc (sub m m) (sub m m) v))
(define-fun bn_params ((c Int) (sc T) (bi T) (m T) (v T)) Bool
  (and (vec sc c) (vec bi c) (vec m c) (vec v c)))

; axiom batchnorm-affine-conv
; test e=2 s=[1,1] p=[1,0,0,0,0] d=[1,1] g=1 a=0 x=f32[2,2,5,5] w=f32[3,2,3,3] sc=f32[3] bi=f32[3] m=f32[3] v=f32[3]
; test e=3 s=[2,1] p=[0,0,0,0,0] d=[1,1] g=2 a=1 x=f32[1,4,6,5] w=f32[2,2,3,3] sc=f32[2] bi=f32[2] m=f32[2] v=f32[2]
(assert (forall ((e Real) (s (Seq Int)) (p (Seq Int)) (d (Seq Int)) (g Int) (a Int) (x T) (w T)
                 (sc T) (bi T) (m T) (v T))
  (! (=> (and (ok_conv s p d g x w) (ok_act a) (bn_params (dim w 0) sc bi m v))
         (= (batchnorm e (conv2d s p d g a x w) sc bi m v)
            (add (mul (conv2d s p d g a x w) (bn_k e (dim w 0) sc m v))
                 (batchnorm e (sub (bn_ones (dim w 0)) (bn_ones (dim w 0))) sc bi m v))))
     :pattern ((batchnorm e (conv2d s p d g a x w) sc bi m v)))))

; A per-channel offset c ([1,C,1,1]) passes through: bn(x + c) = x * k + bn(c).
; axiom batchnorm-add-channel
; test e=2 x=f32[2,3,4,5] c=f32[1,3,1,1] sc=f32[3] bi=f32[3] m=f32[3] v=f32[3]
(assert (forall ((e Real) (x T) (c T) (sc T) (bi T) (m T) (v T))
  (! (=> (and (rk x 4) (bn_params (dim x 1) sc bi m v) (has_shape c (s4 1 (dim x 1) 1 1)))
         (= (batchnorm e (add x c) sc bi m v)
            (add (mul x (bn_k e (dim x 1) sc m v)) (batchnorm e c sc bi m v))))
     :pattern ((batchnorm e (add x c) sc bi m v)))))

; Over a concatenation along the channels, each part is normalized with its
; slice of the parameters.
; axiom batchnorm-concat-channels
; test e=2 n0=2 n1=3 x=f32[1,2,4,4] y=f32[1,3,4,4] sc=f32[5] bi=f32[5] m=f32[5] v=f32[5]
(assert (forall ((e Real) (n0 Int) (n1 Int) (x T) (y T) (sc T) (bi T) (m T) (v T))
  (! (=> (and (ok_concat 1 4 n0 n1 x y) (bn_params (+ n0 n1) sc bi m v))
         (= (batchnorm e (concat 1 4 n0 n1 x y) sc bi m v)
            (concat 1 4 n0 n1
                    (batchnorm e x (split 0 (dim sc 0) 0 n0 sc) (split 0 (dim sc 0) 0 n0 bi)
                               (split 0 (dim sc 0) 0 n0 m) (split 0 (dim sc 0) 0 n0 v))
                    (batchnorm e y (split 0 (dim sc 0) n0 n1 sc) (split 0 (dim sc 0) n0 n1 bi)
                               (split 0 (dim sc 0) n0 n1 m) (split 0 (dim sc 0) n0 n1 v)))))
     :pattern ((batchnorm e (concat 1 4 n0 n1 x y) sc bi m v)))))
