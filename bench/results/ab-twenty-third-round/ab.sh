# before (9763a04) and after (main) alternating, nothing else running
cd /tmp/w/ab23
for r in 1 2; do
  for tree in /work/ab-before /work/main; do
    tag=$(basename $tree)-r$r
    (cd $tree && PYTHONPATH=$tree /work/main/.venv/bin/python bench/join_groupby.py --sizes 1000000 10000000 --steps 30 > /tmp/w/ab23/jg-$tag.txt 2>&1)
    (cd $tree && PYTHONPATH=$tree /work/main/.venv/bin/python bench/vs_pydbsp_join.py > /tmp/w/ab23/pj-$tag.txt 2>&1)
    (cd $tree && PYTHONPATH=$tree /work/main/.venv/bin/python bench/recursion.py --views tc --no-pydbsp > /tmp/w/ab23/tc-$tag.txt 2>&1)
  done
done
echo done > /tmp/w/ab23/DONE
