; gemm (ONNX Gemm): (gemm act alpha beta trans_a trans_b a b) is
; act(alpha * op(a) op(b)); (gemm.3 ... a b c) adds beta * c, c broadcast to
; the [M,N] result.

; axiom gemm-bias
; test al=1 ta=0 tb=0 x=f32[3,5] y=f32[5,4] c=f32[4]
; test al=2 ta=1 tb=1 x=f32[5,3] y=f32[4,5] c=f32[4]
; test al=1 ta=0 tb=0 x=f32[3,5] y=f32[5,4] c=f32[1]
(assert (forall ((al Real) (ta Int) (tb Int) (x T) (y T) (c T))
  (! (=> (and (ok_gemm ta tb x y) (rk c 1) (or (= (dim c 0) 1) (= (dim c 0) (gemm_n tb y))))
         (= (gemm.3 0 al 1.0 ta tb x y c) (add (gemm 0 al 1.0 ta tb x y) c)))
     :pattern ((gemm.3 0 al 1.0 ta tb x y c)) :pattern ((add (gemm 0 al 1.0 ta tb x y) c)))))

; axiom gemm-bias-matrix
; test al=1 ta=0 tb=1 x=f32[3,5] y=f32[4,5] c=f32[3,4]
; test al=3 ta=1 tb=0 x=f32[5,3] y=f32[5,4] c=f32[1,4]
; test al=1 ta=0 tb=0 x=f32[3,5] y=f32[5,4] c=f32[3,1]
(assert (forall ((al Real) (ta Int) (tb Int) (x T) (y T) (c T))
  (! (=> (and (ok_gemm ta tb x y) (rk c 2)
              (or (= (dim c 0) 1) (= (dim c 0) (gemm_m ta x)))
              (or (= (dim c 1) 1) (= (dim c 1) (gemm_n tb y))))
         (= (gemm.3 0 al 1.0 ta tb x y c) (add (gemm 0 al 1.0 ta tb x y) c)))
     :pattern ((gemm.3 0 al 1.0 ta tb x y c)) :pattern ((add (gemm 0 al 1.0 ta tb x y) c)))))

; Without transposes and scaling, gemm is a matrix product (beta is unused
; without c).
; axiom gemm-matmul
; test be=1 x=f32[2,3] y=f32[3,4]
; test be=0 x=f32[1,5] y=f32[5,2]
(assert (forall ((be Real) (x T) (y T))
  (! (=> (ok_mm2 x y) (= (gemm 0 1.0 be 0 0 x y) (matmul 0 x y)))
     :pattern ((gemm 0 1.0 be 0 0 x y)))))

; Fused activations (act relu 1, sigmoid 2, tanh 3, gelu 4; a fused clip is
; (gemm_clip alpha beta trans_a trans_b lo hi a b) and gemm_clip.3), applied
; to the whole result, after beta * c.
(define-fun ok_gemm_c ((ta Int) (tb Int) (x T) (y T) (c T)) Bool
  (and (ok_gemm ta tb x y) (dims_ok c) (<= 1 (rank c) 2)
       (or (= (last_dim c) 1) (= (last_dim c) (gemm_n tb y)))
       (or (= (rank c) 1) (= (dim c 0) 1) (= (dim c 0) (gemm_m ta x)))))

; axiom gemm-relu
; test al=1 be=1 ta=0 tb=0 x=f32[3,5] y=f32[5,4]
; test al=2 be=0 ta=1 tb=1 x=f32[5,3] y=f32[4,5]
(assert (forall ((al Real) (be Real) (ta Int) (tb Int) (x T) (y T))
  (! (=> (ok_gemm ta tb x y) (= (gemm 1 al be ta tb x y) (relu (gemm 0 al be ta tb x y))))
     :pattern ((gemm 1 al be ta tb x y)) :pattern ((relu (gemm 0 al be ta tb x y))))))

; axiom gemm-bias-relu
; test al=1 be=1 ta=0 tb=0 x=f32[3,5] y=f32[5,4] c=f32[4]
; test al=2 be=3 ta=1 tb=0 x=f32[5,3] y=f32[5,4] c=f32[3,1]
(assert (forall ((al Real) (be Real) (ta Int) (tb Int) (x T) (y T) (c T))
  (! (=> (ok_gemm_c ta tb x y c)
         (= (gemm.3 1 al be ta tb x y c) (relu (gemm.3 0 al be ta tb x y c))))
     :pattern ((gemm.3 1 al be ta tb x y c)) :pattern ((relu (gemm.3 0 al be ta tb x y c))))))

; axiom gemm-sigmoid
; test al=1 be=1 ta=0 tb=0 x=f32[3,5] y=f32[5,4]
; test al=2 be=0 ta=1 tb=1 x=f32[5,3] y=f32[4,5]
(assert (forall ((al Real) (be Real) (ta Int) (tb Int) (x T) (y T))
  (! (=> (ok_gemm ta tb x y) (= (gemm 2 al be ta tb x y) (sigmoid (gemm 0 al be ta tb x y))))
     :pattern ((gemm 2 al be ta tb x y)) :pattern ((sigmoid (gemm 0 al be ta tb x y))))))

; axiom gemm-bias-sigmoid
; test al=1 be=1 ta=0 tb=0 x=f32[3,5] y=f32[5,4] c=f32[4]
; test al=2 be=3 ta=1 tb=0 x=f32[5,3] y=f32[5,4] c=f32[3,1]
(assert (forall ((al Real) (be Real) (ta Int) (tb Int) (x T) (y T) (c T))
  (! (=> (ok_gemm_c ta tb x y c)
         (= (gemm.3 2 al be ta tb x y c) (sigmoid (gemm.3 0 al be ta tb x y c))))
     :pattern ((gemm.3 2 al be ta tb x y c)) :pattern ((sigmoid (gemm.3 0 al be ta tb x y c))))))

; axiom gemm-tanh
; test al=1 be=1 ta=0 tb=0 x=f32[3,5] y=f32[5,4]
; test al=2 be=0 ta=1 tb=1 x=f32[5,3] y=f32[4,5]
(assert (forall ((al Real) (be Real) (ta Int) (tb Int) (x T) (y T))
  (! (=> (ok_gemm ta tb x y) (= (gemm 3 al be ta tb x y) (tanh (gemm 0 al be ta tb x y))))
     :pattern ((gemm 3 al be ta tb x y)) :pattern ((tanh (gemm 0 al be ta tb x y))))))

; axiom gemm-bias-tanh
; test al=1 be=1 ta=0 tb=0 x=f32[3,5] y=f32[5,4] c=f32[4]
; test al=2 be=3 ta=1 tb=0 x=f32[5,3] y=f32[5,4] c=f32[3,1]
(assert (forall ((al Real) (be Real) (ta Int) (tb Int) (x T) (y T) (c T))
  (! (=> (ok_gemm_c ta tb x y c)
         (= (gemm.3 3 al be ta tb x y c) (tanh (gemm.3 0 al be ta tb x y c))))
     :pattern ((gemm.3 3 al be ta tb x y c)) :pattern ((tanh (gemm.3 0 al be ta tb x y c))))))

; axiom gemm-gelu
; test al=1 be=1 ta=0 tb=0 x=f32[3,5] y=f32[5,4]
; test al=2 be=0 ta=1 tb=1 x=f32[5,3] y=f32[4,5]
(assert (forall ((al Real) (be Real) (ta Int) (tb Int) (x T) (y T))
  (! (=> (ok_gemm ta tb x y) (= (gemm 4 al be ta tb x y) (gelu (gemm 0 al be ta tb x y))))
     :pattern ((gemm 4 al be ta tb x y)) :pattern ((gelu (gemm 0 al be ta tb x y))))))

; axiom gemm-bias-gelu
; test al=1 be=1 ta=0 tb=0 x=f32[3,5] y=f32[5,4] c=f32[4]
; test al=2 be=3 ta=1 tb=0 x=f32[5,3] y=f32[5,4] c=f32[3,1]
(assert (forall ((al Real) (be Real) (ta Int) (tb Int) (x T) (y T) (c T))
  (! (=> (ok_gemm_c ta tb x y c)
         (= (gemm.3 4 al be ta tb x y c) (gelu (gemm.3 0 al be ta tb x y c))))
     :pattern ((gemm.3 4 al be ta tb x y c)) :pattern ((gelu (gemm.3 0 al be ta tb x y c))))))

; axiom gemm-clip
; test al=1 be=1 ta=0 tb=0 lo=0 hi=6 x=f32[3,5] y=f32[5,4]
; test al=2 be=0 ta=1 tb=1 lo=-1 hi=1 x=f32[5,3] y=f32[4,5]
(assert (forall ((al Real) (be Real) (ta Int) (tb Int) (lo Real) (hi Real) (x T) (y T))
  (! (=> (and (ok_gemm ta tb x y) (ok_clip lo hi))
         (= (gemm_clip al be ta tb lo hi x y) (clip lo hi (gemm 0 al be ta tb x y))))
     :pattern ((gemm_clip al be ta tb lo hi x y)) :pattern ((clip lo hi (gemm 0 al be ta tb x y))))))

; axiom gemm-bias-clip
; test al=1 be=1 ta=0 tb=0 lo=0 hi=6 x=f32[3,5] y=f32[5,4] c=f32[4]
; test al=2 be=3 ta=1 tb=0 lo=-1 hi=1 x=f32[5,3] y=f32[5,4] c=f32[3,1]
(assert (forall ((al Real) (be Real) (ta Int) (tb Int) (lo Real) (hi Real) (x T) (y T) (c T))
  (! (=> (and (ok_gemm_c ta tb x y c) (ok_clip lo hi))
         (= (gemm_clip.3 al be ta tb lo hi x y c) (clip lo hi (gemm.3 0 al be ta tb x y c))))
     :pattern ((gemm_clip.3 al be ta tb lo hi x y c))
     :pattern ((clip lo hi (gemm.3 0 al be ta tb x y c))))))

; Linear in b (and c): a scale of the result folds into the weights.
; axiom gemm-smul
; test al=1 be=1 ta=0 tb=0 x=f32[3,5] y=f32[5,4] s=f32[]
; test al=2 be=0 ta=1 tb=1 x=f32[5,3] y=f32[4,5] s=f32[]
(assert (forall ((al Real) (be Real) (ta Int) (tb Int) (x T) (y T) (s T))
  (! (=> (and (ok_gemm ta tb x y) (scalar s))
         (= (smul (gemm 0 al be ta tb x y) s) (gemm 0 al be ta tb x (smul y s))))
     :pattern ((smul (gemm 0 al be ta tb x y) s)) :pattern ((gemm 0 al be ta tb x (smul y s))))))

; axiom gemm-bias-smul
; test al=1 be=1 ta=0 tb=0 x=f32[3,5] y=f32[5,4] c=f32[4] s=f32[]
; test al=2 be=3 ta=1 tb=0 x=f32[5,3] y=f32[5,4] c=f32[3,1] s=f32[]
(assert (forall ((al Real) (be Real) (ta Int) (tb Int) (x T) (y T) (c T) (s T))
  (! (=> (and (ok_gemm_c ta tb x y c) (scalar s))
         (= (smul (gemm.3 0 al be ta tb x y c) s) (gemm.3 0 al be ta tb x (smul y s) (smul c s))))
     :pattern ((smul (gemm.3 0 al be ta tb x y c) s))
     :pattern ((gemm.3 0 al be ta tb x (smul y s) (smul c s))))))
