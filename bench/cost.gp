# bench/kernel's plot: ns per getppid(2) call against stack depth, one
# line per mode, with the interquartile range, at 2 events per entry.
# gnuplot -e "dir='RUN_DIR'" cost.gp
set terminal pngcairo size 900,560 noenhanced
set output dir.'/cost.png'
set title 'Cost of a user stack per kernel entry (2 events per entry; median and IQR)'
set xlabel 'user stack depth (frames)'
if (!exists("unit")) unit = 'ns (TCG)'
set ylabel unit.' per getppid(2) call'
set key top left
set grid
set xtics (8, 36, 128)
set logscale x 2
set xrange [6:170]
modes = 'none events immediate deferred perf-events perf-fp perf-fp-defer'
plot for [m in modes] dir.'/plot-2-'.m.'.dat' using 1:2:3:4 with yerrorlines title m
