"""What the report derives from results before it draws anything, above read/ and stats/.

In order, each module importing only from those before it: analysis (each suite's ratio chain of SuiteRows, flag
effects, C++/Python eager pairs, compile groups, scaling pairs) and reference (the published tables, their rows'
flags checked against the engine's, and how our steps align with them).
"""
