"""Writes the v2-* seed inputs of the `sim` fuzz target (proptests::sim::run_bytes): a tag byte
(0xF2: both peers speak v2; 0xF1: a v2-offering client and a v1-only agent) and then the
simulation's decisions, here pseudo-random bytes from a fixed seed (the fuzzer mutates them).
Without feature `unstable_protocol_v2` the tag is an ordinary decision byte and the run is v1.

Run: python3 fuzz/seed_gen/sim_v2.py fuzz/corpus/sim
"""
import os, random, sys

out = sys.argv[1]
rng = random.Random(0xAC92)
seeds = {}
for tag, name in ((0xF2, "v2"), (0xF1, "mixed")):
    for i, n in enumerate((600, 1500, 3000, 3000)):
        seeds[f"v2-{name}-{i}"] = bytes([tag]) + bytes(rng.randrange(256) for _ in range(n))

for name, data in seeds.items():
    with open(os.path.join(out, name), "wb") as f:
        f.write(data)
print(len(seeds), "seeds")
