"""The statistics every verdict rests on, above read/: speedup (a speedup with its 95% interval: the seeded bootstrap
of a ratio of medians, the U test and its sample floor, the engine's median-noise rule) and sequential (when a gated
run looks at its rounds, and the level each look spends). Neither imports the other; speedup reads read/'s Result and
Case. Shared by the report and the gate, so a speedup's interval is computed once.
"""
