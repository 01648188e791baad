"""pvf.trainers"""
