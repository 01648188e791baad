"""The figures `pvf reproduce` makes, as settings the command line reads without loading torch.

FIG3_ARCHITECTURES: the value functions fig. 3 compares by default (the paper's two).
FIG4_ARCHITECTURES: the one fig. 4 sweeps by default (its sparse trunks need a net that reads sets).
"""

FIG3_ARCHITECTURES = ("positional", "particle")
FIG4_ARCHITECTURES = ("particle",)
