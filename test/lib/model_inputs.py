"""Runs pb-run on an artifact of a whole model with inputs a trained model
could see, so that its outputs are finite numbers worth comparing:

    python3 model_inputs.py PB_RUN ARTIFACT WORKDIR [pb-run options...]

pb-run's own random inputs are uniform in [-1, 1): a batch norm's running
variance among them is negative half of the time and a deep network's
activations grow layer after layer, so a model's outputs come out NaN or
infinite and match any reference. Here, every input of rank 0 or 1 (batch
norm statistics, scales, biases) is uniform in [0.5, 1.5], every input of
higher rank is normal with a standard deviation of 1/sqrt(fan-in) (the
product of its dimensions after the first), as a weight initializer would
draw it. The inputs are written as .npy files to WORKDIR and passed to
pb-run in argument order, with the options given after WORKDIR. Only f32
inputs are supported (a clear error otherwise)."""
import math
import os
import random
import struct
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import artifact_file  # noqa: E402


def write_npy(path, shape, values):
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }" % (
        ", ".join("%d" % d for d in shape) + ("," if len(shape) == 1 else ""))
    # The magic, version, header length, header padded with spaces to a
    # multiple of 64 bytes and ending in a newline.
    total = 10 + len(header) + 1
    header += " " * ((64 - total % 64) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
        f.write(struct.pack("<%df" % len(values), *values))


def make_inputs(entry, workdir, seed=0):
    rng = random.Random(seed)
    paths = []
    for i, spec in enumerate(entry["inputs"]):
        if spec["dtype"] != "f32":
            sys.exit("model_inputs.py: input %d of entry '%s' is %s; only f32 inputs "
                     "are supported" % (i, entry["name"], spec["dtype"]))
        shape = spec["shape"]
        count = math.prod(shape)
        if len(shape) <= 1:
            values = [rng.uniform(0.5, 1.5) for _ in range(count)]
        else:
            std = 1.0 / math.sqrt(max(1, math.prod(shape[1:])))
            values = [rng.gauss(0.0, std) for _ in range(count)]
        path = os.path.join(workdir, "%d.npy" % i)
        write_npy(path, shape, values)
        paths.append(path)
    return paths


def main(argv):
    if len(argv) < 4:
        sys.exit(__doc__)
    pb_run, artifact, workdir = argv[1:4]
    metadata, _ = artifact_file.split(open(artifact, "rb").read())
    entries = metadata["entries"]
    if len(entries) != 1:
        sys.exit("model_inputs.py: '%s' has %d entries, expected one" % (artifact, len(entries)))
    os.makedirs(workdir, exist_ok=True)
    paths = make_inputs(entries[0], workdir)
    return subprocess.call([pb_run, artifact, "--inputs=" + ",".join(paths)] + argv[4:])


if __name__ == "__main__":
    sys.exit(main(sys.argv))
