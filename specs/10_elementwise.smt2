; Elementwise operators: add and mul (numpy broadcasting, here between
; operands of equal rank), smul (times a rank-0 tensor), relu, sigmoid, tanh.
; Rewrites may reassociate (core/ops.h).

; axiom add-comm
; test x=f32[2,3] y=f32[2,3]
; test x=f32[1,3] y=f32[4,1]
(assert (forall ((x T) (y T))
  (! (=> (bcast x y) (= (add x y) (add y x))) :pattern ((add x y)))))

; axiom add-assoc
; test x=f32[2,3] y=f32[2,3] z=f32[2,3]
; test x=f32[1,3] y=f32[2,1] z=f32[1,3]
(assert (forall ((x T) (y T) (z T))
  (! (=> (and (bcast x y) (bcast y z) (bcast x z))
         (= (add (add x y) z) (add x (add y z))))
     :pattern ((add (add x y) z)) :pattern ((add x (add y z))))))

; axiom mul-comm
; test x=f32[2,3] y=f32[2,3]
; test x=f32[1,3] y=f32[4,1]
(assert (forall ((x T) (y T))
  (! (=> (bcast x y) (= (mul x y) (mul y x))) :pattern ((mul x y)))))

; axiom mul-assoc
; test x=f32[2,3] y=f32[2,3] z=f32[2,3]
; test x=f32[1,3] y=f32[2,1] z=f32[1,3]
(assert (forall ((x T) (y T) (z T))
  (! (=> (and (bcast x y) (bcast y z) (bcast x z))
         (= (mul (mul x y) z) (mul x (mul y z))))
     :pattern ((mul (mul x y) z)) :pattern ((mul x (mul y z))))))

; axiom mul-add-distrib
; test x=f32[2,3] y=f32[2,3] z=f32[2,3]
; test x=f32[2,1] y=f32[1,3] z=f32[2,3]
(assert (forall ((x T) (y T) (z T))
  (! (=> (and (bcast x y) (bcast y z) (bcast x z))
         (= (mul (add x y) z) (add (mul x z) (mul y z))))
     :pattern ((mul (add x y) z)) :pattern ((add (mul x z) (mul y z))))))

; axiom smul-add
; test x=f32[2,3] y=f32[2,3] s=f32[]
; test x=f32[2,1] y=f32[1,3] s=f32[]
(assert (forall ((x T) (y T) (s T))
  (! (=> (and (bcast x y) (scalar s))
         (= (smul (add x y) s) (add (smul x s) (smul y s))))
     :pattern ((smul (add x y) s)) :pattern ((add (smul x s) (smul y s))))))

; axiom smul-mul
; test x=f32[2,3] y=f32[2,3] s=f32[]
; test x=f32[2,1] y=f32[1,3] s=f32[]
(assert (forall ((x T) (y T) (s T))
  (! (=> (and (bcast x y) (scalar s))
         (= (smul (mul x y) s) (mul x (smul y s))))
     :pattern ((smul (mul x y) s)) :pattern ((mul x (smul y s))))))

; axiom smul-smul
; test x=f32[2,3] s=f32[] t=f32[]
; test x=f32[4] s=f32[] t=f32[]
(assert (forall ((x T) (s T) (t T))
  (! (=> (and (dims_ok x) (scalar s) (scalar t))
         (= (smul (smul x s) t) (smul x (mul s t))))
     :pattern ((smul (smul x s) t)) :pattern ((smul x (mul s t))))))

; axiom relu-idempotent
; test x=f32[2,3]
(assert (forall ((x T))
  (! (=> (dims_ok x) (= (relu (relu x)) (relu x))) :pattern ((relu (relu x))))))

; axiom ones-mul
; test x=f32[2,3] sh=[2,3]
; test x=f32[1,2,3,3] sh=[1,2,3,3]
(assert (forall ((x T) (sh (Seq Int)))
  (! (=> (has_shape x sh) (= (mul x (const_ones sh)) x))
     :pattern ((mul x (const_ones sh))))))

; const_pool's kernel is all ones.
; axiom pool-kernel-ones
; test sh=[4,1,3,3]
; test sh=[2,1,1,2]
(assert (forall ((sh (Seq Int)))
  (! (=> (and (= (seq.len sh) 4) (= (seq.nth sh 1) 1) (>= (seq.nth sh 0) 1)
              (>= (seq.nth sh 2) 1) (>= (seq.nth sh 3) 1))
         (= (const_pool sh) (const_ones sh)))
     :pattern ((const_pool sh)))))

; Scaling by a rank-0 tensor, however it is written: mul broadcasts it (either
; side: mul-comm), and a division is the product with its reciprocal, equal
; up to rounding (core/ops.h), also at 0 (x / 0 and x * (1 / 0) are the same
; infinity or NaN). One trigger each, on the form models write, so that
; every smul of a proof does not spawn a mul.
; axiom mul-scalar
; test x=f32[2,3] s=f32[]
; test x=f32[1,2,3,3] s=f32[]
(assert (forall ((x T) (s T))
  (! (=> (and (dims_ok x) (>= (rank x) 1) (scalar s)) (= (mul x s) (smul x s)))
     :pattern ((mul x s)))))

; axiom div-scalar
; test x=f32[2,3] s=f32[]
; test x=f32[1,2,3,3] s=f32[]
(assert (forall ((x T) (s T))
  (! (=> (and (dims_ok x) (>= (rank x) 1) (scalar s))
         (= (div x s) (smul x (div (const_ones (as seq.empty (Seq Int))) s))))
     :pattern ((div x s)))))

; A vector bias along the last axis (ok_vec_add) scales with its sum.
; axiom smul-add-vector
; test x=f32[2,3,4] b=f32[4] s=f32[]
; test x=f32[3,2] b=f32[2] s=f32[]
(assert (forall ((x T) (b T) (s T))
  (! (=> (and (ok_vec_add x b) (scalar s))
         (= (smul (add x b) s) (add (smul x s) (smul b s))))
     :pattern ((smul (add x b) s)) :pattern ((add (smul x s) (smul b s))))))
