#!/bin/bash
# one sitting: dbspc (main's checkout) and the peers, round after round, one at a time
S=/work/scratch-peers; R=$S/run_one.sh; M=/work/main; PY=$M/.venv/bin/python
DSN="host=$S/pgivm/sock port=54331 user=postgres dbname=postgres"
cd $M; echo "dbspc $(git rev-parse --short HEAD)"
for r in 1 2; do
  echo "##### round $r"
  sizes="1000000"; [ $r = 1 ] && sizes="1000000 10000000"
  (cd $M && $R $PY bench/join_groupby.py --sizes $sizes --steps 20)
  for n in $sizes; do (cd $S/peers && $R $S/pwenv/bin/python bench_pathway_join.py --rows $n --steps 20 --view table); done
  (cd $S/peers && $R $S/pgivm/venv/bin/python bench_pg_ivm.py --dsn "$DSN" --sizes $sizes --steps 20 --json $S/results/pgivm-r$r.json)
  (cd $M && $R $PY bench/recursion.py --views tc --no-pydbsp --steps 20)
  (cd $M && $R $PY bench/recursion.py --views tc --no-pydbsp --steps 20 --nodes 200000)
  (cd $S/peers && $R $S/pwenv/bin/python bench_pathway_tc.py --nodes 20000 --steps 20)
  (cd $S/peers && $R $S/pwenv/bin/python bench_pathway_tc.py --nodes 200000 --steps 20)
done
echo "##### checks"
(cd $S/peers && $R $PY bench_pathway_tc.py --nodes 20000 --steps 20 --check-generator $M)
(cd $S/peers && $R $PY bench_pathway_tc.py --nodes 200000 --steps 20 --check-generator $M)
