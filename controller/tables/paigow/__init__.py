"""tables/paigow"""
