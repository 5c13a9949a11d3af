; reshape (ONNX Reshape, here with explicit extents >= 1): the same elements
; in the same (row-major) order under another shape.

; axiom reshape-same
; test sh=[2,3] x=f32[2,3]
; test sh=[1,4,1,1] x=f32[1,4,1,1]
(assert (forall ((sh (Seq Int)) (x T))
  (! (=> (has_shape x sh) (= (reshape sh x) x)) :pattern ((reshape sh x)))))

; axiom reshape-reshape
; test sh1=[6] sh2=[3,2] x=f32[2,3]
; test sh1=[4,1,1,1] sh2=[1,4,1,1] x=f32[4]
(assert (forall ((sh1 (Seq Int)) (sh2 (Seq Int)) (x T))
  (! (=> (and (ok_reshape sh1 x) (ok_reshape sh2 x))
         (= (reshape sh2 (reshape sh1 x)) (reshape sh2 x)))
     :pattern ((reshape sh2 (reshape sh1 x))))))

; axiom reshape-smul
; test sh=[3,2] x=f32[2,3] s=f32[]
; test sh=[1,2,2,3] x=f32[1,4,3] s=f32[]
(assert (forall ((sh (Seq Int)) (x T) (s T))
  (! (=> (and (ok_reshape sh x) (scalar s)) (= (reshape sh (smul x s)) (smul (reshape sh x) s)))
     :pattern ((reshape sh (smul x s))) :pattern ((smul (reshape sh x) s)))))
