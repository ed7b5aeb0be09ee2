"""Jobs that change the database: the rebuild, the nightly run, snapshot retention."""
