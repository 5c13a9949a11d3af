; Grouped and depthwise convolution, stated as the group split. A conv2d
; with g groups cuts the input channels into g slices of dim(w,1) channels
; and the weight's output channels into g slices of C_out / g, and convolves
; slice i with weight slice i: so a conv of g1 + g2 groups is the channel
; concatenation of a conv of g1 groups over the first g1 slices and one of
; g2 groups over the rest, provided both parts have the same output channels
; per group (n0 / g1 = n1 / g2; with unequal widths the groups of the merged
; conv cut the stacked weight elsewhere). g1 = g2 = 1 merges two plain
; convolutions into a grouped one; dim(w,1) = 1 is depthwise (g = C_in).
; Induction on g1 + g2 gives the g-fold split. Three forms: two inputs and
; one input cut by split, each triggered by the concatenation of the two
; convolutions, and the two-input form triggered by a split of the grouped
; conv's output.

; Both parts have the same output channels per group.
(define-fun group_widths ((g1 Int) (g2 Int) (n0 Int) (n1 Int)) Bool
  (and (>= g1 1) (>= g2 1) (= (mod n0 g1) 0) (= (mod n1 g2) 0) (= (* n0 g2) (* n1 g1))))

; Two inputs: their convolutions concatenated are one grouped convolution
; over the concatenated inputs with the concatenated weights.
; axiom conv-grouped-concat
; test s=[1,1] p=[1,0,0,0,0] d=[1,1] a=0 g1=1 g2=1 n0=3 n1=3 x1=f32[1,2,5,5] x2=f32[1,2,5,5] w1=f32[3,2,3,3] w2=f32[3,2,3,3]
; test s=[2,1] p=[2,1,0,0,1] d=[1,2] a=1 g1=2 g2=1 n0=4 n1=2 x1=f32[2,4,6,7] x2=f32[2,2,6,7] w1=f32[4,2,3,2] w2=f32[2,2,3,2]
; test s=[1,1] p=[1,0,0,0,0] d=[1,1] a=2 g1=3 g2=2 n0=6 n1=4 x1=f32[1,3,5,5] x2=f32[1,2,5,5] w1=f32[6,1,3,3] w2=f32[4,1,3,3]
; test s=[1,2] p=[0,0,0,0,0] d=[1,1] a=3 g1=2 g2=2 n0=2 n1=2 x1=f32[1,2,4,6] x2=f32[1,2,4,6] w1=f32[2,1,3,3] w2=f32[2,1,3,3]
(assert (forall ((s (Seq Int)) (p (Seq Int)) (d (Seq Int)) (a Int) (g1 Int) (g2 Int) (n0 Int) (n1 Int)
                 (x1 T) (x2 T) (w1 T) (w2 T))
  (! (=> (and (ok_conv s p d g1 x1 w1) (ok_conv s p d g2 x2 w2) (ok_act a)
              (ok_concat 1 4 (dim x1 1) (dim x2 1) x1 x2) (ok_concat 0 4 n0 n1 w1 w2)
              (group_widths g1 g2 n0 n1))
         (= (concat 1 4 n0 n1 (conv2d s p d g1 a x1 w1) (conv2d s p d g2 a x2 w2))
            (conv2d s p d (+ g1 g2) a (concat 1 4 (dim x1 1) (dim x2 1) x1 x2)
                    (concat 0 4 n0 n1 w1 w2))))
     :pattern ((concat 1 4 n0 n1 (conv2d s p d g1 a x1 w1) (conv2d s p d g2 a x2 w2))))))

; One input: the convolutions of its two channel slices concatenated are one
; grouped convolution over the whole input.
; axiom conv-grouped
; test s=[1,1] p=[1,0,0,0,0] d=[1,1] a=0 c=4 h1=2 h2=2 g1=1 g2=1 n0=3 n1=3 x=f32[1,4,5,5] w1=f32[3,2,3,3] w2=f32[3,2,3,3]
; test s=[2,2] p=[0,0,0,0,0] d=[1,1] a=1 c=2 h1=1 h2=1 g1=1 g2=1 n0=1 n1=1 x=f32[2,2,5,6] w1=f32[1,1,3,2] w2=f32[1,1,3,2]
; test s=[1,1] p=[2,0,1,2,0] d=[2,1] a=0 c=6 h1=4 h2=2 g1=2 g2=1 n0=4 n1=2 x=f32[1,6,5,5] w1=f32[4,2,3,3] w2=f32[2,2,3,3]
; test s=[1,1] p=[1,0,0,0,0] d=[1,1] a=3 c=5 h1=2 h2=3 g1=2 g2=3 n0=4 n1=6 x=f32[1,5,6,6] w1=f32[4,1,3,3] w2=f32[6,1,3,3]
(assert (forall ((s (Seq Int)) (p (Seq Int)) (d (Seq Int)) (a Int) (c Int) (h1 Int) (h2 Int)
                 (g1 Int) (g2 Int) (n0 Int) (n1 Int) (x T) (w1 T) (w2 T))
  (! (=> (and (rk x 4) (= (dim x 1) c) (= c (+ h1 h2)) (ok_act a)
              (= h1 (* g1 (dim w1 1))) (= h2 (* g2 (dim w1 1)))
              (ok_concat 0 4 n0 n1 w1 w2) (group_widths g1 g2 n0 n1)
              (conv_fits s p d (dim x 2) (dim x 3) (dim w1 2) (dim w1 3)))
         (= (concat 1 4 n0 n1 (conv2d s p d g1 a (split 1 c 0 h1 x) w1)
                              (conv2d s p d g2 a (split 1 c h1 h2 x) w2))
            (conv2d s p d (+ g1 g2) a x (concat 0 4 n0 n1 w1 w2))))
     :pattern ((concat 1 4 n0 n1 (conv2d s p d g1 a (split 1 c 0 h1 x) w1)
                                 (conv2d s p d g2 a (split 1 c h1 h2 x) w2))))))

; The same read from the grouped side: a grouped conv over concatenated
; inputs and weights is the concatenation of the two parts' convolutions,
; with h = dim(w1,1) input channels per group (g1 = c1 / h, g2 = c2 / h).
; Triggered by a split of its output along the channels (two convolutions
; merged into a grouped one whose outputs are used apart): triggered by the
; grouped conv alone, its instances on plain convs over concatenated inputs
; and weights (created by the other conv axioms) took 64 rules of
; taso_n4.rules past the 10 s timeout. n, the split's total, only binds.
; axiom conv-grouped-split
; test s=[1,1] p=[1,0,0,0,0] d=[1,1] a=0 g=2 n=6 c1=2 c2=2 n0=3 n1=3 x1=f32[1,2,5,5] x2=f32[1,2,5,5] w1=f32[3,2,3,3] w2=f32[3,2,3,3]
; test s=[2,1] p=[2,1,0,0,1] d=[1,2] a=1 g=3 n=6 c1=4 c2=2 n0=4 n1=2 x1=f32[2,4,6,7] x2=f32[2,2,6,7] w1=f32[4,2,3,2] w2=f32[2,2,3,2]
; test s=[1,1] p=[1,0,0,0,0] d=[1,1] a=2 g=5 n=10 c1=3 c2=2 n0=6 n1=4 x1=f32[1,3,5,5] x2=f32[1,2,5,5] w1=f32[6,1,3,3] w2=f32[4,1,3,3]
(assert (forall ((s (Seq Int)) (p (Seq Int)) (d (Seq Int)) (a Int) (g Int) (c1 Int) (c2 Int)
                 (n0 Int) (n1 Int) (n Int) (x1 T) (x2 T) (w1 T) (w2 T))
  (! (=> (and (>= g 2) (ok_concat 1 4 c1 c2 x1 x2) (ok_concat 0 4 n0 n1 w1 w2) (ok_act a)
              (= (mod c1 (dim w1 1)) 0) (= (mod c2 (dim w1 1)) 0)
              (= g (+ (div c1 (dim w1 1)) (div c2 (dim w1 1))))
              (group_widths (div c1 (dim w1 1)) (div c2 (dim w1 1)) n0 n1)
              (conv_fits s p d (dim x1 2) (dim x1 3) (dim w1 2) (dim w1 3)))
         (= (conv2d s p d g a (concat 1 4 c1 c2 x1 x2) (concat 0 4 n0 n1 w1 w2))
            (concat 1 4 n0 n1 (conv2d s p d (div c1 (dim w1 1)) a x1 w1)
                              (conv2d s p d (div c2 (dim w1 1)) a x2 w2))))
     :pattern ((split 1 n 0 n0 (conv2d s p d g a (concat 1 4 c1 c2 x1 x2) (concat 0 4 n0 n1 w1 w2)))))))
