"""Modal screens: permission asks, the /resume picker, plan approval."""
