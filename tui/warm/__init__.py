"""The warm worker for ``ccx -p``: when it is used (``policy``), the client that hands a run
over (``client``), the worker that forks (``worker``), the forked run (``child``) and the
peer checks on its socket (``peer``)."""
