"""Reads and writes PolyBlocks artifact files (format version 2) in Python,
for tests and inspection tools; runtime/lib/Artifact.cpp is the reference:

    b"PBARTIF2"                  magic and format version
    u64 metadata size, metadata  (JSON)
    u64 payload size, payload    (the code)
    SHA-256 of every byte before it (32 bytes)

with sizes little-endian."""
import hashlib
import json
import struct

MAGIC = b"PBARTIF2"
DIGEST_BYTES = 32


class ArtifactFileError(ValueError):
    pass


def split(data: bytes):
    """(metadata dict, payload bytes) of an artifact file's bytes; raises
    ArtifactFileError when its magic, version, sizes or digest are wrong."""
    if data[:8] != MAGIC:
        raise ArtifactFileError("not a version-2 PolyBlocks artifact (magic %r)" % data[:8])
    body, digest = data[:-DIGEST_BYTES], data[-DIGEST_BYTES:]
    if len(data) < 8 + 16 + DIGEST_BYTES or hashlib.sha256(body).digest() != digest:
        raise ArtifactFileError("the artifact's digest does not match its contents")
    (meta_size,) = struct.unpack_from("<Q", body, 8)
    meta = body[16:16 + meta_size]
    offset = 16 + meta_size
    (payload_size,) = struct.unpack_from("<Q", body, offset)
    payload = body[offset + 8:offset + 8 + payload_size]
    if offset + 8 + payload_size != len(body):
        raise ArtifactFileError("the artifact's sizes do not match its length")
    return json.loads(meta), payload


def join(metadata, payload) -> bytes:
    """An artifact file's bytes; `metadata` a dict or JSON text, `payload`
    bytes or a JSON-serializable value (an NVIDIA plan)."""
    m = metadata if isinstance(metadata, bytes) else (
        metadata.encode() if isinstance(metadata, str) else json.dumps(metadata).encode())
    p = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    body = MAGIC + struct.pack("<Q", len(m)) + m + struct.pack("<Q", len(p)) + p
    return body + hashlib.sha256(body).digest()


def read_gpu_payload(path, fmt: str, vendor: str):
    """The JSON payload of the GPU artifact file at `path`, whose format must
    be `fmt` ("nvidia-ptx+plan", "amd-hsaco+plan"); exits with a message
    otherwise (for the inspection scripts)."""
    import sys
    try:
        meta, payload = split(open(path, "rb").read())
    except ArtifactFileError as e:
        sys.exit("%s: %s" % (path, e))
    if meta.get("format") != fmt:
        sys.exit("not an %s artifact: format %r" % (vendor, meta.get("format")))
    return json.loads(payload)


def print_plan(payload):
    """A GPU payload's launch plan, one entry and one launch a line."""
    print("arch %s" % payload["arch"])
    for entry in payload["entries"]:
        print("entry %s buffers %s" % (entry["name"], json.dumps(
            entry["buffers"], sort_keys=True)))
        for launch in entry["launches"]:
            print("launch %s grid %s block %s shared %d args %s" % (
                launch["kernel"], launch["grid"], launch["block"],
                launch["static_shared_memory_bytes"] +
                launch["dynamic_shared_memory_bytes"], launch["args"]))
