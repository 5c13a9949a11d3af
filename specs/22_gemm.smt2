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
