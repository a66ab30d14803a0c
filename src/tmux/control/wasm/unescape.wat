;; tmux control mode's %output unescape (`\ooo` -> one byte), for ControlParser.
;; `unescape(src, len, dst)` decodes memory[src, src+len) to dst and returns the decoded length.
;; dst may not overlap the source; it needs room for `len + 16` bytes (whole 16-byte stores).
;; A backslash not followed by three octal digits with a first digit of 0-3 is kept as it is.
;; Runs of plain bytes move 16 at a time: one load, one compare, one store per 16 bytes, and at
;; a backslash only the bytes before it count (the rest of the store is written over later).
;; Generated into unescape.ts by `npm run wasm`; never edit that file by hand.
(module
  (memory (export "memory") 1)
  (func (export "unescape") (param $src i32) (param $len i32) (param $dst i32) (result i32)
    (local $i i32) (local $end i32) (local $o i32) (local $v v128) (local $mask i32) (local $k i32)
    (local $a i32) (local $b i32) (local $d i32)
    (local.set $i (local.get $src))
    (local.set $o (local.get $dst))
    (local.set $end (i32.add (local.get $src) (local.get $len)))
    (block $done
      (loop $next
        ;; 16 plain bytes at a time while they are whole
        (block $scalar
          (loop $wide
            (br_if $scalar (i32.gt_u (i32.add (local.get $i) (i32.const 16)) (local.get $end)))
            (local.set $v (v128.load align=1 (local.get $i)))
            (v128.store align=1 (local.get $o) (local.get $v))
            (local.set $mask (i8x16.bitmask (i8x16.eq (local.get $v) (i8x16.splat (i32.const 0x5c)))))
            (if (i32.eqz (local.get $mask))
              (then
                (local.set $i (i32.add (local.get $i) (i32.const 16)))
                (local.set $o (i32.add (local.get $o) (i32.const 16)))
                (br $wide)))
            ;; the bytes before the first backslash are already stored
            (local.set $k (i32.ctz (local.get $mask)))
            (local.set $i (i32.add (local.get $i) (local.get $k)))
            (local.set $o (i32.add (local.get $o) (local.get $k)))
            (br $scalar)))
        (br_if $done (i32.ge_u (local.get $i) (local.get $end)))
        (if (i32.ne (i32.load8_u (local.get $i)) (i32.const 0x5c))
          (then
            (i32.store8 (local.get $o) (i32.load8_u (local.get $i)))
            (local.set $i (i32.add (local.get $i) (i32.const 1)))
            (local.set $o (i32.add (local.get $o) (i32.const 1)))
            (br $next)))
        ;; a backslash: three octal digits after it make one byte
        (if (i32.le_u (i32.add (local.get $i) (i32.const 4)) (local.get $end))
          (then
            (local.set $a (i32.sub (i32.load8_u offset=1 (local.get $i)) (i32.const 0x30)))
            (local.set $b (i32.sub (i32.load8_u offset=2 (local.get $i)) (i32.const 0x30)))
            (local.set $d (i32.sub (i32.load8_u offset=3 (local.get $i)) (i32.const 0x30)))
            (if (i32.and
                  (i32.eqz (i32.and (i32.or (i32.or (local.get $a) (local.get $b)) (local.get $d)) (i32.const -8)))
                  (i32.lt_u (local.get $a) (i32.const 4)))
              (then
                (i32.store8 (local.get $o)
                  (i32.or (i32.or (i32.shl (local.get $a) (i32.const 6)) (i32.shl (local.get $b) (i32.const 3))) (local.get $d)))
                (local.set $i (i32.add (local.get $i) (i32.const 4)))
                (local.set $o (i32.add (local.get $o) (i32.const 1)))
                (br $next)))))
        (i32.store8 (local.get $o) (i32.const 0x5c))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (local.set $o (i32.add (local.get $o) (i32.const 1)))
        (br $next)))
    (i32.sub (local.get $o) (local.get $dst))))
