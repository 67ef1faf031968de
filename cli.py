"""`python cli.py ...` from a source checkout: the same as the installed `dbspc` command."""

from dbspc.cli import main

if __name__ == "__main__":
    main()
