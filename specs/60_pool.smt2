; Pooling: (avgpool stride pad kernel ceil_mode count_include_pad x),
; (maxpool stride pad kernel ceil_mode x), NCHW windows over H and W.

; axiom avgpool-concat
; test k=[2,2] s=[2,2] p=[0,0,0,0,0] cm=0 ci=0 a=1 n0=1 n1=2 x=f32[1,1,4,4] y=f32[1,2,4,4]
; test k=[3,3] s=[1,1] p=[1,0,0,0,0] cm=0 ci=0 a=0 n0=2 n1=1 x=f32[2,2,5,5] y=f32[1,2,5,5]
(assert (forall ((k (Seq Int)) (s (Seq Int)) (p (Seq Int)) (cm Int) (ci Int) (a Int) (n0 Int) (n1 Int)
                 (x T) (y T))
  (! (=> (and (<= a 1) (ok_concat a 4 n0 n1 x y) (ok_pool s p k cm x) (ok_flag ci))
         (= (avgpool s p k cm ci (concat a 4 n0 n1 x y))
            (concat a 4 n0 n1 (avgpool s p k cm ci x) (avgpool s p k cm ci y))))
     :pattern ((avgpool s p k cm ci (concat a 4 n0 n1 x y)))
     :pattern ((concat a 4 n0 n1 (avgpool s p k cm ci x) (avgpool s p k cm ci y))))))

; axiom maxpool-concat
; test k=[2,2] s=[2,2] p=[0,0,0,0,0] cm=0 a=1 n0=1 n1=2 x=f32[1,1,4,4] y=f32[1,2,4,4]
; test k=[3,3] s=[2,2] p=[2,1,1,1,1] cm=1 a=0 n0=2 n1=1 x=f32[2,2,6,6] y=f32[1,2,6,6]
(assert (forall ((k (Seq Int)) (s (Seq Int)) (p (Seq Int)) (cm Int) (a Int) (n0 Int) (n1 Int)
                 (x T) (y T))
  (! (=> (and (<= a 1) (ok_concat a 4 n0 n1 x y) (ok_pool s p k cm x))
         (= (maxpool s p k cm (concat a 4 n0 n1 x y))
            (concat a 4 n0 n1 (maxpool s p k cm x) (maxpool s p k cm y))))
     :pattern ((maxpool s p k cm (concat a 4 n0 n1 x y)))
     :pattern ((concat a 4 n0 n1 (maxpool s p k cm x) (maxpool s p k cm y))))))

; axiom avgpool-add
; test k=[2,2] s=[1,1] p=[1,0,0,0,0] cm=0 ci=0 x=f32[1,2,4,4] y=f32[1,2,4,4]
; test k=[3,3] s=[2,2] p=[2,1,1,1,1] cm=1 ci=1 x=f32[2,1,5,5] y=f32[2,1,5,5]
(assert (forall ((k (Seq Int)) (s (Seq Int)) (p (Seq Int)) (cm Int) (ci Int) (x T) (y T))
  (! (=> (and (same_shape x y) (ok_pool s p k cm x) (ok_flag ci))
         (= (avgpool s p k cm ci (add x y)) (add (avgpool s p k cm ci x) (avgpool s p k cm ci y))))
     :pattern ((avgpool s p k cm ci (add x y)))
     :pattern ((add (avgpool s p k cm ci x) (avgpool s p k cm ci y))))))

; axiom avgpool-smul
; test k=[2,2] s=[1,1] p=[1,0,0,0,0] cm=0 ci=0 x=f32[1,2,4,4] c=f32[]
(assert (forall ((k (Seq Int)) (s (Seq Int)) (p (Seq Int)) (cm Int) (ci Int) (x T) (c T))
  (! (=> (and (ok_pool s p k cm x) (ok_flag ci) (scalar c))
         (= (avgpool s p k cm ci (smul x c)) (smul (avgpool s p k cm ci x) c)))
     :pattern ((avgpool s p k cm ci (smul x c))) :pattern ((smul (avgpool s p k cm ci x) c)))))

; relu is monotone, so it commutes with max.
; axiom maxpool-relu
; test k=[2,2] s=[2,2] p=[0,0,0,0,0] cm=0 x=f32[1,2,4,4]
; test k=[3,3] s=[1,1] p=[1,0,0,0,0] cm=0 x=f32[1,1,5,5]
(assert (forall ((k (Seq Int)) (s (Seq Int)) (p (Seq Int)) (cm Int) (x T))
  (! (=> (ok_pool s p k cm x) (= (maxpool s p k cm (relu x)) (relu (maxpool s p k cm x))))
     :pattern ((maxpool s p k cm (relu x))) :pattern ((relu (maxpool s p k cm x))))))

; A 1x1 convolution (stride 1, no padding, one group) mixes the channels at
; each position; an average pool averages each channel over windows whose
; weights depend on the position only, counting padding or not: the two
; commute. (A bias does not: at a border a pool that counts padding scales
; it, so a rule moves a bias past the pool as an add.)
; axiom avgpool-conv1x1
; test k=[3,3] s=[1,1] p=[1,0,0,0,0] cm=0 ci=1 x=f32[1,4,5,5] w=f32[3,4,1,1]
; test k=[3,3] s=[1,1] p=[2,1,1,1,1] cm=0 ci=0 x=f32[2,3,5,6] w=f32[2,3,1,1]
; test k=[2,3] s=[2,1] p=[2,1,0,0,1] cm=1 ci=1 x=f32[1,2,5,5] w=f32[4,2,1,1]
(assert (forall ((k (Seq Int)) (s (Seq Int)) (p (Seq Int)) (cm Int) (ci Int) (x T) (w T))
  (! (=> (and (ok_conv ones2 pad_valid ones2 1 x w) (= (dim w 2) 1) (= (dim w 3) 1)
              (ok_pool s p k cm x) (ok_flag ci))
         (= (avgpool s p k cm ci (conv2d ones2 pad_valid ones2 1 0 x w))
            (conv2d ones2 pad_valid ones2 1 0 (avgpool s p k cm ci x) w)))
     :pattern ((avgpool s p k cm ci (conv2d ones2 pad_valid ones2 1 0 x w)))
     :pattern ((conv2d ones2 pad_valid ones2 1 0 (avgpool s p k cm ci x) w)))))
