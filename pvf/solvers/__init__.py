"""pvf.solvers"""
