; Helpers shared by the axiom files (read in name order, parsed as one text).
; Vocabulary: specs/op_functions.h. Attribute encodings: Ints and Pad are
; (Seq Int); Pad is [mode, top, left, bottom, right] with valid 0, same 1,
; explicit 2; Act is none 0, relu 1, sigmoid 2, tanh 3.

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

; x has shape sh (rank <= 4): the guard of laws that must not broadcast.
(define-fun has_shape ((x T) (sh (Seq Int))) Bool
  (and (= (rank x) (seq.len sh)) (<= (rank x) 4)
       (or (<= (rank x) 0) (= (dim x 0) (seq.nth sh 0)))
       (or (<= (rank x) 1) (= (dim x 1) (seq.nth sh 1)))
       (or (<= (rank x) 2) (= (dim x 2) (seq.nth sh 2)))
       (or (<= (rank x) 3) (= (dim x 3) (seq.nth sh 3)))))
; x and y have the same shape (rank <= 4).
(define-fun same_shape ((x T) (y T)) Bool
  (and (= (rank x) (rank y)) (<= (rank x) 4)
       (or (<= (rank x) 0) (= (dim x 0) (dim y 0)))
       (or (<= (rank x) 1) (= (dim x 1) (dim y 1)))
       (or (<= (rank x) 2) (= (dim x 2) (dim y 2)))
       (or (<= (rank x) 3) (= (dim x 3) (dim y 3)))))
