"""Agents that play whole games with pvf's solvers and value functions.

`pvf.agents.resolving`: continual re-solving (a depth-limited solve at every
public state, beliefs carried from solve to solve) and the walk that finds
its strategy everywhere; `pvf.agents.spec`: the SPEC strings `pvf play`
reads and the planners they build.
"""
