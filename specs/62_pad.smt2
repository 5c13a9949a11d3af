; Padding: (pad pads value x), pads [begin per axis, then end per axis] as
; ONNX orders them, every entry >= 0 (core/ops.h). A constant pad in front
; of a window operator is that operator's own padding where the operator
; reads its padding as the same value: zero for a convolution and for an
; average pool that counts padded elements, minus infinity for a max pool
; (its padding never wins). Spatial pads only (none on batch or channels),
; and floor mode for the pools: with ceil_mode a window may start in a pad
; the operator pads itself, not in one it is given as input.

; The pads [0,0,t,l,0,0,b,r] of an NCHW tensor, and the explicit padding
; [t,l,b,r] of a window operator; flat concatenations, as the verifier
; builds attribute sequences (specs/op_functions.h, int_seq).
(define-fun pads_hw ((t Int) (l Int) (b Int) (r Int)) (Seq Int)
  (seq.++ (seq.unit 0) (seq.unit 0) (seq.unit t) (seq.unit l)
          (seq.unit 0) (seq.unit 0) (seq.unit b) (seq.unit r)))
(define-fun pad_explicit ((t Int) (l Int) (b Int) (r Int)) (Seq Int)
  (seq.++ (seq.unit 2) (seq.unit t) (seq.unit l) (seq.unit b) (seq.unit r)))
(define-fun ok_pads ((t Int) (l Int) (b Int) (r Int)) Bool
  (and (>= t 0) (>= l 0) (>= b 0) (>= r 0)))

; axiom conv-pad
; test s=[2,2] d=[1,1] g=1 a=0 t=1 l=2 b=0 r=1 x=f32[1,2,5,6] w=f32[3,2,3,3]
; test s=[1,1] d=[2,1] g=2 a=1 t=2 l=0 b=1 r=3 x=f32[2,4,6,5] w=f32[2,2,3,2]
; test s=[2,1] d=[1,1] g=4 a=3 t=0 l=0 b=0 r=0 x=f32[1,4,5,5] w=f32[8,1,3,3]
(assert (forall ((s (Seq Int)) (d (Seq Int)) (g Int) (a Int) (t Int) (l Int) (b Int) (r Int)
                 (x T) (w T))
  (! (=> (and (ok_pads t l b r) (ok_conv s (pad_explicit t l b r) d g x w) (ok_act a))
         (= (conv2d s pad_valid d g a (pad (pads_hw t l b r) 0.0 x) w)
            (conv2d s (pad_explicit t l b r) d g a x w)))
     :pattern ((conv2d s pad_valid d g a (pad (pads_hw t l b r) 0.0 x) w)))))

; axiom conv-bias-pad
; test s=[2,2] d=[1,1] g=1 a=0 t=1 l=2 b=0 r=1 x=f32[1,2,5,6] w=f32[3,2,3,3] c=f32[3]
; test s=[1,1] d=[1,2] g=2 a=1 t=3 l=1 b=1 r=0 x=f32[2,4,6,5] w=f32[2,2,3,2] c=f32[2]
(assert (forall ((s (Seq Int)) (d (Seq Int)) (g Int) (a Int) (t Int) (l Int) (b Int) (r Int)
                 (x T) (w T) (c T))
  (! (=> (and (ok_pads t l b r) (ok_conv_bias s (pad_explicit t l b r) d g x w c) (ok_act a))
         (= (conv2d.3 s pad_valid d g a (pad (pads_hw t l b r) 0.0 x) w c)
            (conv2d.3 s (pad_explicit t l b r) d g a x w c)))
     :pattern ((conv2d.3 s pad_valid d g a (pad (pads_hw t l b r) 0.0 x) w c)))))

; The padded zeros are elements of the pool's input: the pool pads itself
; and counts them (count_include_pad = 1).
; axiom avgpool-pad
; test k=[3,3] s=[2,2] ci=0 t=1 l=0 b=2 r=1 x=f32[1,2,5,6]
; test k=[2,3] s=[1,1] ci=1 t=0 l=2 b=1 r=0 x=f32[2,1,4,4]
(assert (forall ((k (Seq Int)) (s (Seq Int)) (ci Int) (t Int) (l Int) (b Int) (r Int) (x T))
  (! (=> (and (ok_pads t l b r) (ok_pool s (pad_explicit t l b r) k 0 x) (ok_flag ci))
         (= (avgpool s pad_valid k 0 ci (pad (pads_hw t l b r) 0.0 x))
            (avgpool s (pad_explicit t l b r) k 0 1 x)))
     :pattern ((avgpool s pad_valid k 0 ci (pad (pads_hw t l b r) 0.0 x))))))

; Minus infinity as attributes encode it (specs/op_functions.cc): the
; padding a max pool never picks.
(define-fun neg_inf () Real (/ (- 1.0) 0.0))

; axiom maxpool-pad
; test k=[3,3] s=[2,2] t=1 l=0 b=2 r=1 x=f32[1,2,5,6]
; test k=[2,3] s=[1,1] t=0 l=2 b=1 r=0 x=f32[2,1,4,4]
(assert (forall ((k (Seq Int)) (s (Seq Int)) (t Int) (l Int) (b Int) (r Int) (x T))
  (! (=> (and (ok_pads t l b r) (ok_pool s (pad_explicit t l b r) k 0 x))
         (= (maxpool s pad_valid k 0 (pad (pads_hw t l b r) neg_inf x))
            (maxpool s (pad_explicit t l b r) k 0 x)))
     :pattern ((maxpool s pad_valid k 0 (pad (pads_hw t l b r) neg_inf x))))))
