"""The string hashes TensorFlow's kernels use, written from their published descriptions.

- `fingerprint64`: FarmHash's Fingerprint64 (farmhashna::Hash64), TF's `Fingerprint64`,
  behind `StringToHashBucketFast`, `SparseCross` and the feature-column hash buckets.
- `fingerprint_cat64`: TF's `FingerprintCat64`, which chains two fingerprints (crosses).
- `siphash24`: SipHash-2-4 with a 128-bit key, TF's `StrongKeyedHash`
  (`StringToHashBucketStrong`).
- `legacy_hash64`: TF's own `Hash64` (a MurmurHash64A variant, seed 0xDECAFCAFFE), behind
  the legacy `StringToHashBucket`.

All take `bytes` and return an unsigned 64-bit `int`. Pure Python: these run once per string
of a batch, which is small beside the numpy work of the graph around them.
"""

from __future__ import annotations

M64 = (1 << 64) - 1
_K0 = 0xC3A5C85C97CB3127
_K1 = 0xB492B66FBE98F273
_K2 = 0x9AE16A3B2F90404F


def _f64(s: bytes, i: int) -> int:
    return int.from_bytes(s[i:i + 8], "little")


def _f32(s: bytes, i: int) -> int:
    return int.from_bytes(s[i:i + 4], "little")


def _rot(v: int, shift: int) -> int:
    return v if shift == 0 else ((v >> shift) | (v << (64 - shift))) & M64


def _mix(v: int) -> int:
    return v ^ (v >> 47)


def _len16(u: int, v: int, mul: int) -> int:
    a = _mix(((u ^ v) * mul) & M64)
    b = _mix(((v ^ a) * mul) & M64)
    return (b * mul) & M64


def _len0to16(s: bytes, n: int) -> int:
    if n >= 8:
        mul = _K2 + n * 2
        a = (_f64(s, 0) + _K2) & M64
        b = _f64(s, n - 8)
        c = (_rot(b, 37) * mul + a) & M64
        d = ((_rot(a, 25) + b) * mul) & M64
        return _len16(c, d, mul)
    if n >= 4:
        mul = _K2 + n * 2
        return _len16(n + (_f32(s, 0) << 3), _f32(s, n - 4), mul)
    if n > 0:
        y = s[0] + (s[n >> 1] << 8)
        z = n + (s[n - 1] << 2)
        return (_mix(((y * _K2) ^ (z * _K0)) & M64) * _K2) & M64
    return _K2


def _len17to32(s: bytes, n: int) -> int:
    mul = _K2 + n * 2
    a = (_f64(s, 0) * _K1) & M64
    b = _f64(s, 8)
    c = (_f64(s, n - 8) * mul) & M64
    d = (_f64(s, n - 16) * _K2) & M64
    return _len16((_rot((a + b) & M64, 43) + _rot(c, 30) + d) & M64,
                  (a + _rot((b + _K2) & M64, 18) + c) & M64, mul)


def _len33to64(s: bytes, n: int) -> int:
    mul = _K2 + n * 2
    a = (_f64(s, 0) * _K2) & M64
    b = _f64(s, 8)
    c = (_f64(s, n - 8) * mul) & M64
    d = (_f64(s, n - 16) * _K2) & M64
    y = (_rot((a + b) & M64, 43) + _rot(c, 30) + d) & M64
    z = _len16(y, (a + _rot((b + _K2) & M64, 18) + c) & M64, mul)
    e = (_f64(s, 16) * mul) & M64
    f = _f64(s, 24)
    g = ((y + _f64(s, n - 32)) * mul) & M64
    h = ((z + _f64(s, n - 24)) * mul) & M64
    return _len16((_rot((e + f) & M64, 43) + _rot(g, 30) + h) & M64,
                  (e + _rot((f + a) & M64, 18) + g) & M64, mul)


def _weak32(s: bytes, i: int, a: int, b: int) -> tuple[int, int]:
    w, x, y, z = _f64(s, i), _f64(s, i + 8), _f64(s, i + 16), _f64(s, i + 24)
    a = (a + w) & M64
    b = _rot((b + a + z) & M64, 21)
    c = a
    a = (a + x + y) & M64
    b = (b + _rot(a, 44)) & M64
    return (a + z) & M64, (b + c) & M64


def _round64(s, i, x, y, z, v, w, mul, last):
    x = (_rot((x + y + v[0] + _f64(s, i + 8)) & M64, 37) * mul) & M64
    y = (_rot((y + v[1] + _f64(s, i + 48)) & M64, 42) * mul) & M64
    x ^= (w[1] * 9) & M64 if last else w[1]
    y = (y + (v[0] * 9 if last else v[0]) + _f64(s, i + 40)) & M64
    z = (_rot((z + w[0]) & M64, 33) * mul) & M64
    v = _weak32(s, i, (v[1] * mul) & M64, (x + w[0]) & M64)
    w = _weak32(s, i + 32, (z + w[1]) & M64, (y + _f64(s, i + 16)) & M64)
    return z, y, x, v, w          # x and z swap places, as in the reference


def _long(s: bytes, n: int) -> int:
    seed = 81
    y = (seed * _K1 + 113) & M64
    z = (_mix((y * _K2 + 113) & M64) * _K2) & M64
    v, w = (0, 0), (0, 0)
    x = (seed * _K2 + _f64(s, 0)) & M64
    end = ((n - 1) // 64) * 64
    last64 = end + ((n - 1) & 63) - 63
    for i in range(0, end, 64):
        x, y, z, v, w = _round64(s, i, x, y, z, v, w, _K1, False)
    mul = _K1 + ((z & 0xFF) << 1)
    w0 = (w[0] + ((n - 1) & 63)) & M64
    v0 = (v[0] + w0) & M64
    w = ((w0 + v0) & M64, w[1])
    v = (v0, v[1])
    x, y, z, v, w = _round64(s, last64, x, y, z, v, w, mul, True)
    return _len16((_len16(v[0], w[0], mul) + _mix(y) * _K0 + z) & M64,
                  (_len16(v[1], w[1], mul) + x) & M64, mul)


def fingerprint64(s: bytes) -> int:
    """FarmHash Fingerprint64 of `s` (TF's `Fingerprint64`)."""
    n = len(s)
    if n <= 16:
        return _len0to16(s, n)
    if n <= 32:
        return _len17to32(s, n)
    if n <= 64:
        return _len33to64(s, n)
    return _long(s, n)


_KMUL = 0xC6A4A7935BD1E995


def fingerprint_cat64(fp1: int, fp2: int) -> int:
    """TF's `FingerprintCat64`: one fingerprint from two (order matters)."""
    r = fp1 ^ _KMUL
    r ^= (_mix((fp2 * _KMUL) & M64) * _KMUL) & M64
    r = (r * _KMUL) & M64
    r = (_mix(r) * _KMUL) & M64
    return _mix(r)


def _rotl(v: int, b: int) -> int:
    return ((v << b) | (v >> (64 - b))) & M64


def _sip_round(v0, v1, v2, v3):
    v0 = (v0 + v1) & M64
    v1 = _rotl(v1, 13) ^ v0
    v0 = _rotl(v0, 32)
    v2 = (v2 + v3) & M64
    v3 = _rotl(v3, 16) ^ v2
    v0 = (v0 + v3) & M64
    v3 = _rotl(v3, 21) ^ v0
    v2 = (v2 + v1) & M64
    v1 = _rotl(v1, 17) ^ v2
    v2 = _rotl(v2, 32)
    return v0, v1, v2, v3


def siphash24(key: tuple[int, int], s: bytes) -> int:
    """SipHash-2-4 of `s` under the 128-bit `key` (two uint64 halves, TF's `key` attr)."""
    k0, k1 = key[0] & M64, key[1] & M64
    v = [k0 ^ 0x736F6D6570736575, k1 ^ 0x646F72616E646F6D,
         k0 ^ 0x6C7967656E657261, k1 ^ 0x7465646279746573]
    n = len(s)
    tail = n - n % 8
    words = [_f64(s, i) for i in range(0, tail, 8)]
    words.append(int.from_bytes(s[tail:], "little") | ((n & 0xFF) << 56))
    for m in words:
        v[3] ^= m
        v = list(_sip_round(*_sip_round(*v)))
        v[0] ^= m
    v[2] ^= 0xFF
    for _ in range(4):
        v = list(_sip_round(*v))
    return v[0] ^ v[1] ^ v[2] ^ v[3]


def legacy_hash64(s: bytes, seed: int = 0xDECAFCAFFE) -> int:
    """TF's `Hash64(data, n, seed)` (core/lib/hash), the legacy `StringToHashBucket` hash."""
    r = 47
    n = len(s)
    h = (seed ^ (n * _KMUL)) & M64
    tail = n - n % 8
    for i in range(0, tail, 8):
        k = (_f64(s, i) * _KMUL) & M64
        k = ((k ^ (k >> r)) * _KMUL) & M64
        h = ((h ^ k) * _KMUL) & M64
    if n > tail:
        h = ((h ^ int.from_bytes(s[tail:], "little")) * _KMUL) & M64
    h ^= h >> r
    h = (h * _KMUL) & M64
    return h ^ (h >> r)
