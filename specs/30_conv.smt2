; conv2d: (conv2d stride pad dilation groups act x w), NCHW, weight
; [C_out, C_in/groups, KH, KW]; act none 0, relu 1, sigmoid 2, tanh 3,
; gelu 4; a fused clip is (conv2d_clip stride pad dilation groups lo hi x w).

; axiom conv-relu
; test s=[1,1] p=[1,0,0,0,0] d=[1,1] g=1 x=f32[1,2,5,5] w=f32[3,2,3,3]
; test s=[2,2] p=[0,0,0,0,0] d=[1,1] g=2 x=f32[2,4,6,5] w=f32[2,2,3,1]
(assert (forall ((s (Seq Int)) (p (Seq Int)) (d (Seq Int)) (g Int) (x T) (w T))
  (! (=> (ok_conv s p d g x w) (= (conv2d s p d g 1 x w) (relu (conv2d s p d g 0 x w))))
     :pattern ((conv2d s p d g 1 x w)) :pattern ((relu (conv2d s p d g 0 x w))))))

; axiom conv-sigmoid
; test s=[1,1] p=[1,0,0,0,0] d=[1,1] g=1 x=f32[1,2,5,5] w=f32[3,2,3,3]
(assert (forall ((s (Seq Int)) (p (Seq Int)) (d (Seq Int)) (g Int) (x T) (w T))
  (! (=> (ok_conv s p d g x w) (= (conv2d s p d g 2 x w) (sigmoid (conv2d s p d g 0 x w))))
     :pattern ((conv2d s p d g 2 x w)) :pattern ((sigmoid (conv2d s p d g 0 x w))))))

; axiom conv-tanh
; test s=[1,1] p=[1,0,0,0,0] d=[1,1] g=1 x=f32[1,2,5,5] w=f32[3,2,3,3]
(assert (forall ((s (Seq Int)) (p (Seq Int)) (d (Seq Int)) (g Int) (x T) (w T))
  (! (=> (ok_conv s p d g x w) (= (conv2d s p d g 3 x w) (tanh (conv2d s p d g 0 x w))))
     :pattern ((conv2d s p d g 3 x w)) :pattern ((tanh (conv2d s p d g 0 x w))))))

; axiom conv-gelu
; test s=[1,1] p=[1,0,0,0,0] d=[1,1] g=1 x=f32[1,2,5,5] w=f32[3,2,3,3]
(assert (forall ((s (Seq Int)) (p (Seq Int)) (d (Seq Int)) (g Int) (x T) (w T))
  (! (=> (ok_conv s p d g x w) (= (conv2d s p d g 4 x w) (gelu (conv2d s p d g 0 x w))))
     :pattern ((conv2d s p d g 4 x w)) :pattern ((gelu (conv2d s p d g 0 x w))))))

; axiom conv-clip
; test s=[1,1] p=[1,0,0,0,0] d=[1,1] g=1 lo=0 hi=6 x=f32[1,2,5,5] w=f32[3,2,3,3]
; test s=[2,2] p=[0,0,0,0,0] d=[1,1] g=2 lo=-1 hi=1 x=f32[2,4,6,5] w=f32[2,2,3,1]
(assert (forall ((s (Seq Int)) (p (Seq Int)) (d (Seq Int)) (g Int) (lo Real) (hi Real) (x T) (w T))
  (! (=> (and (ok_conv s p d g x w) (ok_clip lo hi))
         (= (conv2d_clip s p d g lo hi x w) (clip lo hi (conv2d s p d g 0 x w))))
     :pattern ((conv2d_clip s p d g lo hi x w)) :pattern ((clip lo hi (conv2d s p d g 0 x w))))))

; Linear in the weight. Equal shapes only: a broadcast 1x1 kernel is not the
; same as a 1x1 convolution.
; axiom conv-add-weight
; test s=[1,1] p=[1,0,0,0,0] d=[1,1] g=1 x=f32[1,2,5,5] w1=f32[3,2,3,3] w2=f32[3,2,3,3]
; test s=[2,1] p=[2,1,0,0,1] d=[1,2] g=2 x=f32[2,4,6,6] w1=f32[2,2,3,2] w2=f32[2,2,3,2]
(assert (forall ((s (Seq Int)) (p (Seq Int)) (d (Seq Int)) (g Int) (x T) (w1 T) (w2 T))
  (! (=> (and (same_shape w1 w2) (ok_conv s p d g x w1))
         (= (conv2d s p d g 0 x (add w1 w2)) (add (conv2d s p d g 0 x w1) (conv2d s p d g 0 x w2))))
     :pattern ((conv2d s p d g 0 x (add w1 w2)))
     :pattern ((add (conv2d s p d g 0 x w1) (conv2d s p d g 0 x w2))))))

; axiom conv-add-input
; test s=[1,1] p=[1,0,0,0,0] d=[1,1] g=1 x1=f32[1,2,5,5] x2=f32[1,2,5,5] w=f32[3,2,3,3]
; test s=[2,2] p=[0,0,0,0,0] d=[1,1] g=1 x1=f32[2,2,6,5] x2=f32[2,2,6,5] w=f32[3,2,2,2]
(assert (forall ((s (Seq Int)) (p (Seq Int)) (d (Seq Int)) (g Int) (x1 T) (x2 T) (w T))
  (! (=> (and (same_shape x1 x2) (ok_conv s p d g x1 w))
         (= (conv2d s p d g 0 (add x1 x2) w) (add (conv2d s p d g 0 x1 w) (conv2d s p d g 0 x2 w))))
     :pattern ((conv2d s p d g 0 (add x1 x2) w))
     :pattern ((add (conv2d s p d g 0 x1 w) (conv2d s p d g 0 x2 w))))))

; axiom conv-smul-weight
; test s=[1,1] p=[1,0,0,0,0] d=[1,1] g=1 x=f32[1,2,5,5] w=f32[3,2,3,3] c=f32[]
(assert (forall ((s (Seq Int)) (p (Seq Int)) (d (Seq Int)) (g Int) (x T) (w T) (c T))
  (! (=> (and (ok_conv s p d g x w) (scalar c))
         (= (conv2d s p d g 0 x (smul w c)) (smul (conv2d s p d g 0 x w) c)))
     :pattern ((conv2d s p d g 0 x (smul w c))) :pattern ((smul (conv2d s p d g 0 x w) c)))))

; axiom conv-smul-input
; test s=[1,1] p=[1,0,0,0,0] d=[1,1] g=1 x=f32[1,2,5,5] w=f32[3,2,3,3] c=f32[]
(assert (forall ((s (Seq Int)) (p (Seq Int)) (d (Seq Int)) (g Int) (x T) (w T) (c T))
  (! (=> (and (ok_conv s p d g x w) (scalar c))
         (= (conv2d s p d g 0 (smul x c) w) (smul (conv2d s p d g 0 x w) c)))
     :pattern ((conv2d s p d g 0 (smul x c) w)))))

; Output channels: a convolution with weights stacked along C_out is the
; stack of the two convolutions (groups = 1 only: with groups the stacked
; channels would be assigned to other groups).
; axiom conv-concat-weight
; test s=[1,1] p=[1,0,0,0,0] d=[1,1] n0=1 n1=3 x=f32[1,2,5,5] w1=f32[1,2,3,3] w2=f32[3,2,3,3]
; test s=[2,2] p=[0,0,0,0,0] d=[1,1] n0=2 n1=2 x=f32[2,3,7,6] w1=f32[2,3,3,1] w2=f32[2,3,3,1]
(assert (forall ((s (Seq Int)) (p (Seq Int)) (d (Seq Int)) (n0 Int) (n1 Int) (x T) (w1 T) (w2 T))
  (! (=> (and (ok_concat 0 4 n0 n1 w1 w2) (ok_conv s p d 1 x w1))
         (= (conv2d s p d 1 0 x (concat 0 4 n0 n1 w1 w2))
            (concat 1 4 n0 n1 (conv2d s p d 1 0 x w1) (conv2d s p d 1 0 x w2))))
     :pattern ((conv2d s p d 1 0 x (concat 0 4 n0 n1 w1 w2)))
     :pattern ((concat 1 4 n0 n1 (conv2d s p d 1 0 x w1) (conv2d s p d 1 0 x w2))))))

; Input channels: stacking inputs and weights along C_in sums the convolutions.
; axiom conv-concat-channels
; test s=[1,1] p=[1,0,0,0,0] d=[1,1] n0=1 n1=2 m0=1 m1=2 x1=f32[1,1,5,5] x2=f32[1,2,5,5] w1=f32[3,1,3,3] w2=f32[3,2,3,3]
(assert (forall ((s (Seq Int)) (p (Seq Int)) (d (Seq Int)) (n0 Int) (n1 Int) (m0 Int) (m1 Int)
                 (x1 T) (x2 T) (w1 T) (w2 T))
  (! (=> (and (ok_concat 1 4 n0 n1 x1 x2) (ok_concat 1 4 m0 m1 w1 w2) (= n0 m0) (= n1 m1)
              (ok_conv s p d 1 x1 w1))
         (= (conv2d s p d 1 0 (concat 1 4 n0 n1 x1 x2) (concat 1 4 m0 m1 w1 w2))
            (add (conv2d s p d 1 0 x1 w1) (conv2d s p d 1 0 x2 w2))))
     :pattern ((conv2d s p d 1 0 (concat 1 4 n0 n1 x1 x2) (concat 1 4 m0 m1 w1 w2))))))

; The same law for one weight, as a model holds it: a convolution of stacked
; inputs is the sum of the convolutions of each input with its slice of the
; weight's C_in (conv-concat-channels with the weight cut by split).
; axiom conv-concat-channels-weight-slices
; test s=[1,1] p=[1,0,0,0,0] d=[1,1] n0=1 n1=2 x1=f32[1,1,5,5] x2=f32[1,2,5,5] w=f32[3,3,3,3]
; test s=[2,1] p=[2,0,1,0,1] d=[1,2] n0=3 n1=2 x1=f32[2,3,6,7] x2=f32[2,2,6,7] w=f32[4,5,2,3]
(assert (forall ((s (Seq Int)) (p (Seq Int)) (d (Seq Int)) (n0 Int) (n1 Int) (x1 T) (x2 T) (w T))
  (! (=> (and (ok_concat 1 4 n0 n1 x1 x2) (ok_conv s p d 1 (concat 1 4 n0 n1 x1 x2) w))
         (= (conv2d s p d 1 0 (concat 1 4 n0 n1 x1 x2) w)
            (add (conv2d s p d 1 0 x1 (split 1 (+ n0 n1) 0 n0 w))
                 (conv2d s p d 1 0 x2 (split 1 (+ n0 n1) n0 n1 w)))))
     :pattern ((conv2d s p d 1 0 (concat 1 4 n0 n1 x1 x2) w)))))

; Batch: the images of a batch are convolved independently.
; axiom conv-concat-batch
; test s=[1,1] p=[1,0,0,0,0] d=[1,1] g=1 a=1 n0=1 n1=2 x1=f32[1,2,5,5] x2=f32[2,2,5,5] w=f32[3,2,3,3]
; test s=[2,1] p=[0,0,0,0,0] d=[1,1] g=2 a=0 n0=2 n1=1 x1=f32[2,4,6,5] x2=f32[1,4,6,5] w=f32[4,2,3,3]
(assert (forall ((s (Seq Int)) (p (Seq Int)) (d (Seq Int)) (g Int) (a Int) (n0 Int) (n1 Int)
                 (x1 T) (x2 T) (w T))
  (! (=> (and (ok_concat 0 4 n0 n1 x1 x2) (ok_conv s p d g x1 w) (ok_act a))
         (= (conv2d s p d g a (concat 0 4 n0 n1 x1 x2) w)
            (concat 0 4 n0 n1 (conv2d s p d g a x1 w) (conv2d s p d g a x2 w))))
     :pattern ((conv2d s p d g a (concat 0 4 n0 n1 x1 x2) w))
     :pattern ((concat 0 4 n0 n1 (conv2d s p d g a x1 w) (conv2d s p d g a x2 w))))))

; A kernel zero-padded symmetrically computes the same with `same` padding
; at stride 1 (at stride 2 an even input would shift the windows).
; axiom conv-enlarge
; test k=[5,5] g=1 a=0 x=f32[1,2,5,5] w=f32[3,2,3,3]
; test k=[3,5] g=2 a=1 x=f32[2,4,4,6] w=f32[2,2,1,1]
; test k=[4,4] g=1 a=0 x=f32[1,2,6,5] w=f32[2,2,2,2]
(assert (forall ((k (Seq Int)) (g Int) (a Int) (x T) (w T))
  (! (=> (and (ok_conv ones2 pad_same ones2 g x w) (ok_enlarge k w) (ok_act a))
         (= (conv2d ones2 pad_same ones2 g a x (enlarge k w)) (conv2d ones2 pad_same ones2 g a x w)))
     :pattern ((conv2d ones2 pad_same ones2 g a x (enlarge k w))))))

; axiom conv-eye
; test sh=[3,3,3,3] x=f32[1,3,5,5]
; test sh=[2,2,1,3] x=f32[2,2,4,4]
(assert (forall ((sh (Seq Int)) (x T))
  (! (=> (and (rk x 4) (= (seq.len sh) 4) (= (seq.nth sh 0) (dim x 1)) (= (seq.nth sh 1) (dim x 1))
              (>= (seq.nth sh 2) 1) (>= (seq.nth sh 3) 1)
              (= (mod (seq.nth sh 2) 2) 1) (= (mod (seq.nth sh 3) 2) 1))
         (= (conv2d ones2 pad_same ones2 1 0 x (const_eye_conv sh)) x))
     :pattern ((conv2d ones2 pad_same ones2 1 0 x (const_eye_conv sh))))))
