# before (ac70682) and after (main) alternating, nothing else running
cd bench/results/ab-twenty-fourth-round
for r in 1 2; do
  for tree in /work/ab-before /work/main; do
    tag=$(basename $tree)-r$r
    (cd $tree && PYTHONPATH=$tree /work/main/.venv/bin/python bench/join_groupby.py --sizes 1000000 10000000 --steps 30 > bench/results/ab-twenty-fourth-round/jg-$tag.txt 2>&1)
    (cd $tree && PYTHONPATH=$tree /work/main/.venv/bin/python bench/vs_pydbsp_join.py > bench/results/ab-twenty-fourth-round/pj-$tag.txt 2>&1)
    (cd $tree && PYTHONPATH=$tree /work/main/.venv/bin/python bench/recursion.py --views tc --no-pydbsp > bench/results/ab-twenty-fourth-round/tc-$tag.txt 2>&1)
  done
done
echo done > bench/results/ab-twenty-fourth-round/DONE
