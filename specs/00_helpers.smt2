; Helpers shared by the axiom files (read in name order, parsed as one text).
; Vocabulary: specs/op_functions.h. Attribute encodings: Ints and Pad are
; (Seq Int); Pad is [mode, top, left, bottom, right] with valid 0, same 1,
; explicit 2; Act is none 0, relu 1, sigmoid 2, tanh 3, gelu 4. A fused clip is
; not a code: conv2d_clip, matmul_clip and gemm_clip take its bounds instead
; (specs/op_functions.h).

(define-fun s2 ((a Int) (b Int)) (Seq Int) (seq.++ (seq.unit a) (seq.unit b)))
(define-fun s4 ((a Int) (b Int) (c Int) (d Int)) (Seq Int)
  (seq.++ (seq.unit a) (seq.unit b) (seq.unit c) (seq.unit d)))
(define-fun pad_valid () (Seq Int) (seq.++ (seq.unit 0) (s4 0 0 0 0)))
(define-fun pad_same () (Seq Int) (seq.++ (seq.unit 1) (s4 0 0 0 0)))
(define-fun ones2 () (Seq Int) (s2 1 1))

; Permutations of rank 1 to 4 (transpose's perm). The composition p.q maps
; axis i to p[q[i]]: (transpose q (transpose p x)) = (transpose (perm_compose p q) x).
(define-fun perm_at ((p (Seq Int)) (i Int)) Int (seq.nth p i))
(define-fun perm_compose ((p (Seq Int)) (q (Seq Int))) (Seq Int)
  (let ((c0 (seq.unit (perm_at p (perm_at q 0))))
        (c1 (seq.unit (perm_at p (perm_at q 1))))
        (c2 (seq.unit (perm_at p (perm_at q 2))))
        (c3 (seq.unit (perm_at p (perm_at q 3)))))
    (ite (= (seq.len q) 1) c0
    (ite (= (seq.len q) 2) (seq.++ c0 c1)
    (ite (= (seq.len q) 3) (seq.++ c0 c1 c2)
                           (seq.++ c0 c1 c2 c3))))))
(define-fun is_identity_perm ((p (Seq Int))) Bool
  (or (= p (seq.unit 0)) (= p (s2 0 1))
      (= p (seq.++ (seq.unit 0) (s2 1 2))) (= p (s4 0 1 2 3))))
; The position of axis a in p (where transpose moves axis a), len <= 4.
(define-fun perm_index ((p (Seq Int)) (a Int)) Int
  (ite (= (perm_at p 0) a) 0 (ite (= (perm_at p 1) a) 1 (ite (= (perm_at p 2) a) 2 3))))

;
; Validity. Every axiom is guarded so that, whenever its guard holds, both of
; its sides are shape-valid applications; the guard speaks only of the shapes
; of the axiom's tensor variables (rank, dim) and its integer parameters. So
; the axioms stay true when an invalid application denotes an error value
; whose rank and extents no real tensor has, and Z3 cannot chain through
; invalid terms. Ranks up to 4.

; x is a tensor of rank <= 4 with every extent >= 1.
(define-fun dims_ok ((x T)) Bool
  (and (<= 0 (rank x) 4)
       (or (<= (rank x) 0) (>= (dim x 0) 1)) (or (<= (rank x) 1) (>= (dim x 1) 1))
       (or (<= (rank x) 2) (>= (dim x 2) 1)) (or (<= (rank x) 3) (>= (dim x 3) 1))))
(define-fun rk ((x T) (r Int)) Bool (and (dims_ok x) (= (rank x) r)))
(define-fun scalar ((s T)) Bool (= (rank s) 0))

; x has shape sh.
(define-fun has_shape ((x T) (sh (Seq Int))) Bool
  (and (dims_ok x) (= (rank x) (seq.len sh))
       (or (<= (rank x) 0) (= (dim x 0) (seq.nth sh 0)))
       (or (<= (rank x) 1) (= (dim x 1) (seq.nth sh 1)))
       (or (<= (rank x) 2) (= (dim x 2) (seq.nth sh 2)))
       (or (<= (rank x) 3) (= (dim x 3) (seq.nth sh 3)))))
; x and y have the same shape.
(define-fun same_shape ((x T) (y T)) Bool
  (and (dims_ok x) (dims_ok y) (= (rank x) (rank y))
       (or (<= (rank x) 0) (= (dim x 0) (dim y 0)))
       (or (<= (rank x) 1) (= (dim x 1) (dim y 1)))
       (or (<= (rank x) 2) (= (dim x 2) (dim y 2)))
       (or (<= (rank x) 3) (= (dim x 3) (dim y 3)))))
; x and y have the same rank and broadcast (numpy).
(define-fun bc ((a Int) (b Int)) Bool (or (= a b) (= a 1) (= b 1)))
(define-fun bcast ((x T) (y T)) Bool
  (and (dims_ok x) (dims_ok y) (= (rank x) (rank y))
       (or (<= (rank x) 0) (bc (dim x 0) (dim y 0)))
       (or (<= (rank x) 1) (bc (dim x 1) (dim y 1)))
       (or (<= (rank x) 2) (bc (dim x 2) (dim y 2)))
       (or (<= (rank x) 3) (bc (dim x 3) (dim y 3)))))

; (concat a r n0 n1 x y) is valid.
(define-fun ok_concat ((a Int) (r Int) (n0 Int) (n1 Int) (x T) (y T)) Bool
  (and (rk x r) (rk y r) (<= 0 a) (< a r) (= (dim x a) n0) (= (dim y a) n1)
       (or (= a 0) (<= r 0) (= (dim x 0) (dim y 0)))
       (or (= a 1) (<= r 1) (= (dim x 1) (dim y 1)))
       (or (= a 2) (<= r 2) (= (dim x 2) (dim y 2)))
       (or (= a 3) (<= r 3) (= (dim x 3) (dim y 3)))))
; (split a t o l x) is valid.
(define-fun ok_split ((a Int) (t Int) (o Int) (l Int) (x T)) Bool
  (and (dims_ok x) (<= 0 a) (< a (rank x)) (= (dim x a) t) (>= o 0) (>= l 1) (<= (+ o l) t)))

; (transpose p x) is valid: p a permutation of the axes of x.
(define-fun in_rank ((v Int) (n Int)) Bool (and (<= 0 v) (< v n)))
(define-fun ok_perm ((p (Seq Int)) (x T)) Bool
  (let ((n (seq.len p)))
    (and (dims_ok x) (= n (rank x)) (>= n 1)
         (in_rank (perm_at p 0) n)
         (or (< n 2) (and (in_rank (perm_at p 1) n) (distinct (perm_at p 0) (perm_at p 1))))
         (or (< n 3) (and (in_rank (perm_at p 2) n)
                          (distinct (perm_at p 0) (perm_at p 1) (perm_at p 2))))
         (or (< n 4) (and (in_rank (perm_at p 3) n)
                          (distinct (perm_at p 0) (perm_at p 1) (perm_at p 2) (perm_at p 3)))))))

; matmul of two matrices.
(define-fun ok_mm2 ((x T) (y T)) Bool (and (rk x 2) (rk y 2) (= (dim x 1) (dim y 0))))
; matmul of a batch of matrices (rank 3) by one matrix (a transformer's
; projection).
(define-fun ok_mm3 ((x T) (y T)) Bool (and (rk x 3) (rk y 2) (= (dim x 2) (dim y 0))))
; and of a rank-4 batch.
(define-fun ok_mm4 ((x T) (y T)) Bool (and (rk x 4) (rk y 2) (= (dim x 3) (dim y 0))))
; x plus a vector b along its last axis (a bias; numpy broadcasting).
(define-fun last_dim ((x T)) Int
  (ite (= (rank x) 1) (dim x 0) (ite (= (rank x) 2) (dim x 1) (ite (= (rank x) 3) (dim x 2) (dim x 3)))))
(define-fun ok_vec_add ((x T) (b T)) Bool
  (and (dims_ok x) (>= (rank x) 1) (rk b 1) (= (dim b 0) (last_dim x))))
; matmul of a matrix or a batch of them (rank 2 to 4) by one matrix: a
; projection at any rank, for the laws that hold elementwise on its result.
(define-fun ok_mmb ((x T) (y T)) Bool
  (and (dims_ok x) (>= (rank x) 2) (rk y 2) (= (last_dim x) (dim y 0))))

; Windows (conv2d, pools): stride/dilation/kernel pairs, padding, fit.
(define-fun ok_pair ((s (Seq Int))) Bool
  (and (= (seq.len s) 2) (>= (seq.nth s 0) 1) (>= (seq.nth s 1) 1)))
(define-fun ok_pad ((p (Seq Int))) Bool
  (and (= (seq.len p) 5) (<= 0 (seq.nth p 0) 2)
       (>= (seq.nth p 1) 0) (>= (seq.nth p 2) 0) (>= (seq.nth p 3) 0) (>= (seq.nth p 4) 0)
       (or (= (seq.nth p 0) 2)
           (and (= (seq.nth p 1) 0) (= (seq.nth p 2) 0) (= (seq.nth p 3) 0) (= (seq.nth p 4) 0)))))
; A window of effective extent eff fits spatial axis i (0 = H, 1 = W) of extent n.
(define-fun fits ((n Int) (eff Int) (p (Seq Int)) (i Int)) Bool
  (or (= (seq.nth p 0) 1) (>= (+ n (seq.nth p (+ 1 i)) (seq.nth p (+ 3 i))) eff)))
(define-fun conv_fits ((s (Seq Int)) (p (Seq Int)) (d (Seq Int)) (xh Int) (xw Int) (kh Int) (kw Int)) Bool
  (and (ok_pair s) (ok_pair d) (ok_pad p)
       (fits xh (+ 1 (* (- kh 1) (seq.nth d 0))) p 0)
       (fits xw (+ 1 (* (- kw 1) (seq.nth d 1))) p 1)))
(define-fun ok_act ((a Int)) Bool (<= 0 a 4))
; Bounds of a clip, standalone or fused (clip's shape inference).
(define-fun ok_clip ((lo Real) (hi Real)) Bool (<= lo hi))
; (conv2d s p d g a x w) is valid (for any act a with ok_act).
(define-fun ok_conv ((s (Seq Int)) (p (Seq Int)) (d (Seq Int)) (g Int) (x T) (w T)) Bool
  (and (rk x 4) (rk w 4) (>= g 1) (= (dim x 1) (* (dim w 1) g)) (= (mod (dim w 0) g) 0)
       (conv_fits s p d (dim x 2) (dim x 3) (dim w 2) (dim w 3))))
; (avgpool s p k cm ci x) / (maxpool s p k cm x) are valid (with ci 0 or 1).
(define-fun ok_pool ((s (Seq Int)) (p (Seq Int)) (k (Seq Int)) (cm Int) (x T)) Bool
  (and (rk x 4) (ok_pair s) (ok_pair k) (ok_pad p) (<= 0 cm 1)
       (< (seq.nth p 1) (seq.nth k 0)) (< (seq.nth p 3) (seq.nth k 0))
       (< (seq.nth p 2) (seq.nth k 1)) (< (seq.nth p 4) (seq.nth k 1))
       (fits (dim x 2) (seq.nth k 0) p 0) (fits (dim x 3) (seq.nth k 1) p 1)))
(define-fun ok_flag ((f Int)) Bool (<= 0 f 1))
; (enlarge k w) is valid.
(define-fun ok_enlarge ((k (Seq Int)) (w T)) Bool
  (and (rk w 4) (ok_pair k) (>= (seq.nth k 0) (dim w 2)) (>= (seq.nth k 1) (dim w 3))
       (= (mod (- (seq.nth k 0) (dim w 2)) 2) 0) (= (mod (- (seq.nth k 1) (dim w 3)) 2) 0)))

; Element counts (rank <= 4) and reshape targets: a shape of 1 to 4 extents,
; each >= 1 (no 0 or -1 entries), with as many elements as x.
(define-fun numel ((x T)) Int
  (* (ite (<= (rank x) 0) 1 (dim x 0)) (ite (<= (rank x) 1) 1 (dim x 1))
     (ite (<= (rank x) 2) 1 (dim x 2)) (ite (<= (rank x) 3) 1 (dim x 3))))
(define-fun seq_numel ((sh (Seq Int))) Int
  (* (ite (<= (seq.len sh) 0) 1 (seq.nth sh 0)) (ite (<= (seq.len sh) 1) 1 (seq.nth sh 1))
     (ite (<= (seq.len sh) 2) 1 (seq.nth sh 2)) (ite (<= (seq.len sh) 3) 1 (seq.nth sh 3))))
(define-fun ok_reshape ((sh (Seq Int)) (x T)) Bool
  (and (dims_ok x) (<= 1 (seq.len sh) 4)
       (>= (seq.nth sh 0) 1) (or (<= (seq.len sh) 1) (>= (seq.nth sh 1) 1))
       (or (<= (seq.len sh) 2) (>= (seq.nth sh 2) 1)) (or (<= (seq.len sh) 3) (>= (seq.nth sh 3) 1))
       (= (seq_numel sh) (numel x))))

; A per-channel vector: rank 1 with extent c.
(define-fun vec ((v T) (c Int)) Bool (and (rk v 1) (= (dim v 0) c)))
; (conv2d.3 s p d g a x w b) is valid: b is [C_out].
(define-fun ok_conv_bias ((s (Seq Int)) (p (Seq Int)) (d (Seq Int)) (g Int) (x T) (w T) (b T)) Bool
  (and (ok_conv s p d g x w) (vec b (dim w 0))))
; (gemm al be ta tb a x y) is valid; gemm_m / gemm_n its result's extents.
(define-fun gemm_m ((ta Int) (x T)) Int (ite (= ta 0) (dim x 0) (dim x 1)))
(define-fun gemm_n ((tb Int) (y T)) Int (ite (= tb 0) (dim y 1) (dim y 0)))
(define-fun ok_gemm ((ta Int) (tb Int) (x T) (y T)) Bool
  (and (rk x 2) (rk y 2) (ok_flag ta) (ok_flag tb)
       (= (ite (= ta 0) (dim x 1) (dim x 0)) (ite (= tb 0) (dim y 0) (dim y 1)))))
