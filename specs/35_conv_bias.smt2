; conv2d with a bias: (conv2d.3 stride pad dilation groups act x w b), b of
; shape [C_out] added to every output channel before the activation.

; axiom conv-bias
; test s=[1,1] p=[1,0,0,0,0] d=[1,1] g=1 x=f32[1,2,5,5] w=f32[3,2,3,3] b=f32[3]
; test s=[2,1] p=[2,1,0,0,1] d=[1,2] g=2 x=f32[2,4,6,6] w=f32[2,2,3,2] b=f32[2]
(assert (forall ((s (Seq Int)) (p (Seq Int)) (d (Seq Int)) (g Int) (x T) (w T) (b T))
  (! (=> (ok_conv_bias s p d g x w b)
         (= (conv2d.3 s p d g 0 x w b)
            (add (conv2d s p d g 0 x w) (reshape (s4 1 (dim w 0) 1 1) b))))
     :pattern ((conv2d.3 s p d g 0 x w b)))))

; axiom conv-bias-relu
; test s=[1,1] p=[1,0,0,0,0] d=[1,1] g=1 x=f32[1,2,5,5] w=f32[3,2,3,3] b=f32[3]
; test s=[2,2] p=[0,0,0,0,0] d=[1,1] g=2 x=f32[2,4,6,5] w=f32[2,2,3,1] b=f32[2]
(assert (forall ((s (Seq Int)) (p (Seq Int)) (d (Seq Int)) (g Int) (x T) (w T) (b T))
  (! (=> (ok_conv_bias s p d g x w b)
         (= (conv2d.3 s p d g 1 x w b) (relu (conv2d.3 s p d g 0 x w b))))
     :pattern ((conv2d.3 s p d g 1 x w b)) :pattern ((relu (conv2d.3 s p d g 0 x w b))))))

; axiom conv-bias-sigmoid
; test s=[1,1] p=[1,0,0,0,0] d=[1,1] g=1 x=f32[1,2,5,5] w=f32[3,2,3,3] b=f32[3]
(assert (forall ((s (Seq Int)) (p (Seq Int)) (d (Seq Int)) (g Int) (x T) (w T) (b T))
  (! (=> (ok_conv_bias s p d g x w b)
         (= (conv2d.3 s p d g 2 x w b) (sigmoid (conv2d.3 s p d g 0 x w b))))
     :pattern ((conv2d.3 s p d g 2 x w b)) :pattern ((sigmoid (conv2d.3 s p d g 0 x w b))))))

; axiom conv-bias-tanh
; test s=[1,1] p=[1,0,0,0,0] d=[1,1] g=1 x=f32[1,2,5,5] w=f32[3,2,3,3] b=f32[3]
(assert (forall ((s (Seq Int)) (p (Seq Int)) (d (Seq Int)) (g Int) (x T) (w T) (b T))
  (! (=> (ok_conv_bias s p d g x w b)
         (= (conv2d.3 s p d g 3 x w b) (tanh (conv2d.3 s p d g 0 x w b))))
     :pattern ((conv2d.3 s p d g 3 x w b)) :pattern ((tanh (conv2d.3 s p d g 0 x w b))))))

; A scale of the result folds into the weight and the bias.
; axiom conv-bias-smul
; test s=[1,1] p=[1,0,0,0,0] d=[1,1] g=1 x=f32[1,2,5,5] w=f32[3,2,3,3] b=f32[3] c=f32[]
; test s=[2,1] p=[2,1,0,0,1] d=[1,2] g=2 x=f32[2,4,6,6] w=f32[2,2,3,2] b=f32[2] c=f32[]
(assert (forall ((s (Seq Int)) (p (Seq Int)) (d (Seq Int)) (g Int) (x T) (w T) (b T) (c T))
  (! (=> (and (ok_conv_bias s p d g x w b) (scalar c))
         (= (smul (conv2d.3 s p d g 0 x w b) c) (conv2d.3 s p d g 0 x (smul w c) (smul b c))))
     :pattern ((smul (conv2d.3 s p d g 0 x w b) c))
     :pattern ((conv2d.3 s p d g 0 x (smul w c) (smul b c))))))

; axiom conv-bias-gelu
; test s=[1,1] p=[1,0,0,0,0] d=[1,1] g=1 x=f32[1,2,5,5] w=f32[3,2,3,3] b=f32[3]
(assert (forall ((s (Seq Int)) (p (Seq Int)) (d (Seq Int)) (g Int) (x T) (w T) (b T))
  (! (=> (ok_conv_bias s p d g x w b)
         (= (conv2d.3 s p d g 4 x w b) (gelu (conv2d.3 s p d g 0 x w b))))
     :pattern ((conv2d.3 s p d g 4 x w b)) :pattern ((gelu (conv2d.3 s p d g 0 x w b))))))

; axiom conv-bias-clip
; test s=[1,1] p=[1,0,0,0,0] d=[1,1] g=1 lo=0 hi=6 x=f32[1,2,5,5] w=f32[3,2,3,3] b=f32[3]
; test s=[2,2] p=[0,0,0,0,0] d=[1,1] g=2 lo=-1 hi=1 x=f32[2,4,6,5] w=f32[2,2,3,1] b=f32[2]
(assert (forall ((s (Seq Int)) (p (Seq Int)) (d (Seq Int)) (g Int) (lo Real) (hi Real) (x T) (w T)
                 (b T))
  (! (=> (and (ok_conv_bias s p d g x w b) (ok_clip lo hi))
         (= (conv2d_clip.3 s p d g lo hi x w b) (clip lo hi (conv2d.3 s p d g 0 x w b))))
     :pattern ((conv2d_clip.3 s p d g lo hi x w b))
     :pattern ((clip lo hi (conv2d.3 s p d g 0 x w b))))))

; Output channels with biases: weights and biases stacked along C_out give
; the stack of the two convolutions (groups = 1, as conv-concat-weight).
; axiom conv-bias-concat-weight
; test s=[1,1] p=[1,0,0,0,0] d=[1,1] a=0 n0=1 n1=3 x=f32[1,2,5,5] w1=f32[1,2,3,3] w2=f32[3,2,3,3] b1=f32[1] b2=f32[3]
; test s=[2,2] p=[0,0,0,0,0] d=[1,1] a=1 n0=2 n1=2 x=f32[2,3,7,6] w1=f32[2,3,3,1] w2=f32[2,3,3,1] b1=f32[2] b2=f32[2]
(assert (forall ((s (Seq Int)) (p (Seq Int)) (d (Seq Int)) (a Int) (n0 Int) (n1 Int)
                 (x T) (w1 T) (w2 T) (b1 T) (b2 T))
  (! (=> (and (ok_concat 0 4 n0 n1 w1 w2) (ok_concat 0 1 n0 n1 b1 b2) (ok_conv s p d 1 x w1)
              (ok_act a))
         (= (conv2d.3 s p d 1 a x (concat 0 4 n0 n1 w1 w2) (concat 0 1 n0 n1 b1 b2))
            (concat 1 4 n0 n1 (conv2d.3 s p d 1 a x w1 b1) (conv2d.3 s p d 1 a x w2 b2))))
     :pattern ((conv2d.3 s p d 1 a x (concat 0 4 n0 n1 w1 w2) (concat 0 1 n0 n1 b1 b2)))
     :pattern ((concat 1 4 n0 n1 (conv2d.3 s p d 1 a x w1 b1) (conv2d.3 s p d 1 a x w2 b2))))))

; conv-enlarge with a bias (stride 1, same padding).
; axiom conv-bias-enlarge
; test k=[5,5] g=1 a=0 x=f32[1,2,5,5] w=f32[3,2,3,3] b=f32[3]
; test k=[3,5] g=2 a=1 x=f32[2,4,4,6] w=f32[2,2,1,1] b=f32[2]
(assert (forall ((k (Seq Int)) (g Int) (a Int) (x T) (w T) (b T))
  (! (=> (and (ok_conv_bias ones2 pad_same ones2 g x w b) (ok_enlarge k w) (ok_act a))
         (= (conv2d.3 ones2 pad_same ones2 g a x (enlarge k w) b)
            (conv2d.3 ones2 pad_same ones2 g a x w b)))
     :pattern ((conv2d.3 ones2 pad_same ones2 g a x (enlarge k w) b)))))

; Scaling each output channel's weights by r[c] scales that output channel
; (any groups: every output channel has its own weights).
; axiom conv-scale-out-channel
; test s=[1,1] p=[1,0,0,0,0] d=[1,1] g=1 x=f32[1,2,5,5] w=f32[3,2,3,3] r=f32[3,1,1,1]
; test s=[2,1] p=[2,1,0,0,1] d=[1,2] g=2 x=f32[2,4,6,6] w=f32[2,2,3,2] r=f32[2,1,1,1]
(assert (forall ((s (Seq Int)) (p (Seq Int)) (d (Seq Int)) (g Int) (x T) (w T) (r T))
  (! (=> (and (ok_conv s p d g x w) (has_shape r (s4 (dim w 0) 1 1 1)))
         (= (conv2d s p d g 0 x (mul w r))
            (mul (conv2d s p d g 0 x w) (reshape (s4 1 (dim w 0) 1 1) r))))
     :pattern ((conv2d s p d g 0 x (mul w r))))))
