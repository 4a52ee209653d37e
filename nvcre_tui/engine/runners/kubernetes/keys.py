"""The ssh key pair of a batch-fallback MPI run (what Kubeflow Trainer generates for a TrainJob): an Ed25519 key in
OpenSSH's formats, made here rather than by ssh-keygen. The engine's image (the repository's Dockerfile: python:3.11-slim,
numeric user 65532 with no passwd entry) has no ssh-keygen, and ssh-keygen exits "No user exists for uid 65532" where
the user has no passwd entry (an arbitrary UID, as OpenShift assigns): the in-cluster engine could run no batch MPI run.

Ed25519 as RFC 8032 section 5.1.5 makes a key: the public key is [a]B for the clamped first half of SHA-512(seed).
The seed comes from the operating system's CSPRNG (secrets); nothing here signs or verifies, so nothing here needs to
be constant-time: the pods' sshd and ssh do the rest. The formats are OpenSSH's PROTOCOL.key (unencrypted) and the
authorized_keys line."""

from __future__ import annotations

import base64
import hashlib
import secrets
import struct

KEY_TYPE = b"ssh-ed25519"
COMMENT = b"nvcre"

_P = 2**255 - 19
_D = -121665 * pow(121666, _P - 2, _P) % _P
_BASE_Y = 4 * pow(5, _P - 2, _P) % _P
_Point = tuple[int, int, int, int]  # extended coordinates (X, Y, Z, T): x = X/Z, y = Y/Z, xy = T/Z


def _recover_x(y: int, sign: int) -> int:
    """The x of the curve point with this y whose low bit is `sign` (RFC 8032 5.1.3)."""
    xx = (y * y - 1) * pow(_D * y * y + 1, _P - 2, _P) % _P
    x = pow(xx, (_P + 3) // 8, _P)
    if (x * x - xx) % _P:
        x = x * pow(2, (_P - 1) // 4, _P) % _P
    return _P - x if x & 1 != sign else x


_BASE_X = _recover_x(_BASE_Y, 0)
_BASE: _Point = (_BASE_X, _BASE_Y, 1, _BASE_X * _BASE_Y % _P)


def _add(p: _Point, q: _Point) -> _Point:
    """p + q on edwards25519 (the unified addition of RFC 8032 5.1.4)."""
    a = (p[1] - p[0]) * (q[1] - q[0]) % _P
    b = (p[1] + p[0]) * (q[1] + q[0]) % _P
    c = 2 * p[3] * q[3] * _D % _P
    d = 2 * p[2] * q[2] % _P
    e, f, g, h = b - a, d - c, d + c, b + a
    return (e * f % _P, g * h % _P, f * g % _P, e * h % _P)


def _multiply(scalar: int, point: _Point) -> _Point:
    result: _Point = (0, 1, 1, 0)  # the neutral element
    while scalar:
        if scalar & 1:
            result = _add(result, point)
        point = _add(point, point)
        scalar >>= 1
    return result


def public_key(seed: bytes) -> bytes:
    """The 32-byte Ed25519 public key of a 32-byte seed (RFC 8032 5.1.5)."""
    digest = hashlib.sha512(seed).digest()
    scalar = int.from_bytes(digest[:32], "little")
    scalar = (scalar & ((1 << 254) - 8)) | (1 << 254)
    x, y, z, _ = _multiply(scalar, _BASE)
    inverse = pow(z, _P - 2, _P)
    x, y = x * inverse % _P, y * inverse % _P
    return int.to_bytes(y | ((x & 1) << 255), 32, "little")


def _string(data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + data


def openssh_keys(seed: bytes) -> tuple[str, str]:
    """(private key file, authorized_keys line) of the Ed25519 key of `seed`, as ssh-keygen writes them unencrypted."""
    public = public_key(seed)
    blob = _string(KEY_TYPE) + _string(public)
    check = secrets.token_bytes(4)
    private = check + check + _string(KEY_TYPE) + _string(public) + _string(seed + public) + _string(COMMENT)
    private += bytes(range(1, 1 + (-len(private)) % 8))  # padding to the "none" cipher's block size, 1, 2, 3, ...
    body = (b"openssh-key-v1\0" + _string(b"none") + _string(b"none") + _string(b"") + struct.pack(">I", 1)
            + _string(blob) + _string(private))
    text = base64.b64encode(body).decode()
    lines = [text[i:i + 70] for i in range(0, len(text), 70)]
    pem = "-----BEGIN OPENSSH PRIVATE KEY-----\n" + "\n".join(lines) + "\n-----END OPENSSH PRIVATE KEY-----\n"
    return pem, f"{KEY_TYPE.decode()} {base64.b64encode(blob).decode()} {COMMENT.decode()}\n"


async def ssh_key_pair() -> tuple[str, str]:
    """(private, public) OpenSSH Ed25519 keys of a fresh random seed."""
    return openssh_keys(secrets.token_bytes(32))
