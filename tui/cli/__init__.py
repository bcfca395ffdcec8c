"""The ``ccx`` command line: the console script (``launcher``), its options and headless runs
(``main``), the Agent SDK's flags (``sdk_flags``) and the choice of interactive front end."""
