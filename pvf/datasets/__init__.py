"""pvf.datasets"""
