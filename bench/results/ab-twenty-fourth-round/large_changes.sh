for r in 1 2; do
  for tree in /work/ab-before /work/main; do
    echo "== $tree r$r 100k"; (cd $tree && PYTHONPATH=$tree /work/main/.venv/bin/python bench/join_groupby.py --sizes 1000000 --steps 8 --change 100000 --new-rows 2>&1 | grep "^| 1")
    echo "== $tree r$r 1M"; (cd $tree && PYTHONPATH=$tree /work/main/.venv/bin/python bench/join_groupby.py --sizes 1000000 --steps 4 --change 1000000 --new-rows 2>&1 | grep "^| 1")
  done
done
