"""The full-screen Textual app: the app, the bridge to the session's agent thread, how
events show, its screens and widgets."""
