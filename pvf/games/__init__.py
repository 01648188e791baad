"""pvf.games"""
