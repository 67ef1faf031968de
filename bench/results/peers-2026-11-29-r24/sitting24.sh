#!/bin/bash
# a short sitting: the 1M join (dbspc, Pathway, pg_ivm) in 2 rounds, then pydbsp's join twice
S=/work/scratch-peers; R=$S/run_one.sh; M=/work/main; PY=$M/.venv/bin/python
DSN="host=$S/pgivm/sock port=54331 user=postgres dbname=postgres"
cd $M; echo "dbspc $(git rev-parse --short HEAD)"
for r in 1 2; do
  echo "##### round $r"
  (cd $M && $R $PY bench/join_groupby.py --sizes 1000000 --steps 20)
  (cd $S/peers && $R $S/pwenv/bin/python bench_pathway_join.py --rows 1000000 --steps 20 --view table)
  (cd $S/peers && $R $S/pgivm/venv/bin/python bench_pg_ivm.py --dsn "$DSN" --sizes 1000000 --steps 20 --json $S/results/r24/pgivm-r$r.json)
done
echo "##### pydbsp"
for r in 1 2; do (cd $M && $R $PY bench/vs_pydbsp_join.py); done
