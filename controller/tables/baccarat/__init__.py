"""tables/baccarat"""
