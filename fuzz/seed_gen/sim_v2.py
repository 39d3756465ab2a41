"""Writes the v2-* seed inputs of the `sim` fuzz target (proptests::sim::run_bytes): a tag byte
(0xF2: a v2 client and an agent speaking both; 0xF1: a v1 client and an agent speaking both;
each agent through an Acceptor) and then the simulation's decisions, here pseudo-random bytes from a fixed seed (the fuzzer mutates them).
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

# Longer v2 runs that reach the lifecycle, auth, terminal and elicitation flows: four of the
# streams of random.Random(0xAC93 + k), k < 200, picked (by running them through
# proptests::sim::run_bytes) so that together they reach resumes, closes and deletes, a turn
# ended by its session's close, login and logout, terminal/cancel accepted, elicitations of
# both modes, one cancelled by the agent, and elicitation/complete.
for k in (9, 19, 170, 186):
    rng = random.Random(0xAC93 + k)
    seeds[f"v2-v2-flows-{k}"] = bytes([0xF2]) + bytes(rng.randrange(256) for _ in range(4000))

for name, data in seeds.items():
    with open(os.path.join(out, name), "wb") as f:
        f.write(data)
print(len(seeds), "seeds")
