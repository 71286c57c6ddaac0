"""Damages every file of a kernel cache directory: the odd ones (in name
order) are cut in half, the even ones get one byte of the object flipped."""
import pathlib
import sys

for i, path in enumerate(sorted(pathlib.Path(sys.argv[1]).glob("*.o"))):
    data = bytearray(path.read_bytes())
    if i % 2:
        data = data[: len(data) // 2]
    else:
        data[len(data) // 2] ^= 0x40
    path.write_bytes(bytes(data))
