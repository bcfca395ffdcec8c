"""`ccx demo`: an offline tour with a scripted model in a sample project."""
