// HiBench-like MapReduce jobs of the harness, run with Hadoop's LocalJobRunner (no HDFS, no YARN).
// Usage: HarnessMR [-D key=value ...] generate|run <job> <data dir> <out dir> <scale> <seed>
// Prints "MR_STARTED" once the JVM and Hadoop configuration are up and
// "MR_RESULT {json}" with the summed job time when every job of the workload succeeded.
package harness;

import java.io.BufferedWriter;
import java.io.File;
import java.io.FileWriter;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Random;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.conf.Configured;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.io.DoubleWritable;
import org.apache.hadoop.io.LongWritable;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.mapreduce.Job;
import org.apache.hadoop.mapreduce.Mapper;
import org.apache.hadoop.mapreduce.Reducer;
import org.apache.hadoop.mapreduce.lib.input.FileInputFormat;
import org.apache.hadoop.mapreduce.lib.output.FileOutputFormat;
import org.apache.hadoop.util.Tool;
import org.apache.hadoop.util.ToolRunner;

public class HarnessMR extends Configured implements Tool {
    static final int FILES = 4;
    static final int KMEANS_K = 8;
    static final int KMEANS_DIMS = 10;

    // ---------------------------------------------------------------- data generation
    static BufferedWriter[] writers(File dir) throws IOException {
        if (!dir.mkdirs() && !dir.isDirectory()) throw new IOException("cannot create " + dir);
        BufferedWriter[] out = new BufferedWriter[FILES];
        for (int i = 0; i < FILES; i++) {
            out[i] = new BufferedWriter(new FileWriter(new File(dir, "part-" + i + ".txt")), 1 << 16);
        }
        return out;
    }

    static void close(BufferedWriter[] out) throws IOException {
        for (BufferedWriter w : out) w.close();
    }

    static void generate(String job, File data, double scale, long seed) throws IOException {
        Random rnd = new Random(seed);
        switch (job) {
            case "wordcount": {
                BufferedWriter[] out = writers(new File(data, "text"));
                long lines = Math.max(1000, (long) (250_000 * scale));
                for (long i = 0; i < lines; i++) {
                    StringBuilder line = new StringBuilder();
                    for (int w = 0; w < 12; w++) {
                        double r = rnd.nextDouble();
                        line.append('w').append((int) (r * r * r * 5000)).append(' ');
                    }
                    out[(int) (i % FILES)].write(line.append('\n').toString());
                }
                close(out);
                break;
            }
            case "join": {
                long pages = Math.max(100, (long) (20_000 * scale));
                long visits = Math.max(1000, (long) (300_000 * scale));
                BufferedWriter[] rank = writers(new File(data, "rankings"));
                for (long i = 0; i < pages; i++) {
                    rank[(int) (i % FILES)].write("url" + i + "\t" + rnd.nextInt(1000) + "\t"
                        + rnd.nextInt(100) + "\n");
                }
                close(rank);
                BufferedWriter[] uv = writers(new File(data, "uservisits"));
                for (long i = 0; i < visits; i++) {
                    double r = rnd.nextDouble();
                    int day = rnd.nextInt(1000);
                    uv[(int) (i % FILES)].write("ip" + rnd.nextInt((int) Math.max(1, visits / 20))
                        + "\turl" + (long) (r * r * pages) + "\t" + (1998 + day / 365) + "-"
                        + String.format(Locale.ROOT, "%03d", day % 365) + "\t"
                        + String.format(Locale.ROOT, "%.4f", rnd.nextDouble() * 100)
                        + "\tMozilla/5.0-------------------------------\n");
                }
                close(uv);
                break;
            }
            case "pagerank": {
                long nodes = Math.max(100, (long) (40_000 * scale));
                BufferedWriter[] out = writers(new File(data, "graph"));
                for (long n = 0; n < nodes; n++) {
                    StringBuilder line = new StringBuilder().append(n).append("\t1.0\t");
                    int degree = 1 + rnd.nextInt(15);
                    for (int e = 0; e < degree; e++) {
                        double r = rnd.nextDouble();
                        if (e > 0) line.append(',');
                        line.append((long) (r * r * nodes));
                    }
                    out[(int) (n % FILES)].write(line.append('\n').toString());
                }
                close(out);
                break;
            }
            case "kmeans": {
                long points = Math.max(1000, (long) (100_000 * scale));
                BufferedWriter[] out = writers(new File(data, "points"));
                for (long i = 0; i < points; i++) {
                    StringBuilder line = new StringBuilder();
                    long centre = i % KMEANS_K;
                    for (int d = 0; d < KMEANS_DIMS; d++) {
                        if (d > 0) line.append(',');
                        line.append(String.format(Locale.ROOT, "%.5f",
                            centre * 5.0 + rnd.nextGaussian()));
                    }
                    out[(int) (i % FILES)].write(line.append('\n').toString());
                }
                close(out);
                break;
            }
            default:
                throw new IllegalArgumentException("unknown job " + job);
        }
    }

    // ---------------------------------------------------------------- wordcount
    public static class TokenMapper extends Mapper<LongWritable, Text, Text, LongWritable> {
        private final Text word = new Text();
        private final LongWritable one = new LongWritable(1);

        @Override
        protected void map(LongWritable key, Text value, Context ctx)
                throws IOException, InterruptedException {
            for (String token : value.toString().split(" ")) {
                if (token.isEmpty()) continue;
                word.set(token);
                ctx.write(word, one);
            }
        }
    }

    public static class SumReducer extends Reducer<Text, LongWritable, Text, LongWritable> {
        @Override
        protected void reduce(Text key, Iterable<LongWritable> values, Context ctx)
                throws IOException, InterruptedException {
            long sum = 0;
            for (LongWritable v : values) sum += v.get();
            ctx.write(key, new LongWritable(sum));
        }
    }

    // ---------------------------------------------------------------- join (reduce side)
    public static class JoinMapper extends Mapper<LongWritable, Text, Text, Text> {
        @Override
        protected void map(LongWritable key, Text value, Context ctx)
                throws IOException, InterruptedException {
            String[] f = value.toString().split("\t");
            if (f.length == 3) {  // rankings: pageURL, pageRank, avgDuration
                ctx.write(new Text(f[0]), new Text("R" + f[1]));
            } else if (f.length >= 4 && f[2].startsWith("1999")) {  // visits of 1999 only
                ctx.write(new Text(f[1]), new Text("V" + f[0] + "\t" + f[3]));
            }
        }
    }

    public static class JoinReducer extends Reducer<Text, Text, Text, Text> {
        @Override
        protected void reduce(Text key, Iterable<Text> values, Context ctx)
                throws IOException, InterruptedException {
            String rank = null;
            List<String> visits = new ArrayList<>();
            for (Text t : values) {
                String s = t.toString();
                if (s.charAt(0) == 'R') rank = s.substring(1); else visits.add(s.substring(1));
            }
            if (rank == null) return;
            for (String v : visits) {
                String[] f = v.split("\t");  // sourceIP, adRevenue
                ctx.write(new Text(f[0]), new Text(f[1] + "\t" + rank));
            }
        }
    }

    public static class RevenueMapper extends Mapper<LongWritable, Text, Text, Text> {
        @Override
        protected void map(LongWritable key, Text value, Context ctx)
                throws IOException, InterruptedException {
            String[] f = value.toString().split("\t");  // sourceIP, revenue, rank
            ctx.write(new Text(f[0]), new Text(f[1] + "\t" + f[2] + "\t1"));
        }
    }

    /** Sums revenue, rank and count; usable as combiner because it re-emits the same shape. */
    public static class RevenueReducer extends Reducer<Text, Text, Text, Text> {
        @Override
        protected void reduce(Text key, Iterable<Text> values, Context ctx)
                throws IOException, InterruptedException {
            double revenue = 0, rank = 0;
            long n = 0;
            for (Text t : values) {
                String[] f = t.toString().split("\t");
                revenue += Double.parseDouble(f[0]);
                rank += Double.parseDouble(f[1]);
                n += Long.parseLong(f[2]);
            }
            ctx.write(key, new Text(revenue + "\t" + rank + "\t" + n));
        }
    }

    // ---------------------------------------------------------------- pagerank (one iteration)
    public static class RankMapper extends Mapper<LongWritable, Text, LongWritable, Text> {
        @Override
        protected void map(LongWritable key, Text value, Context ctx)
                throws IOException, InterruptedException {
            String[] f = value.toString().split("\t");  // node, rank, links
            long node = Long.parseLong(f[0]);
            String links = f.length > 2 ? f[2] : "";
            ctx.write(new LongWritable(node), new Text("L" + links));
            if (links.isEmpty()) return;
            String[] out = links.split(",");
            double share = Double.parseDouble(f[1]) / out.length;
            for (String target : out) {
                ctx.write(new LongWritable(Long.parseLong(target)), new Text("C" + share));
            }
        }
    }

    public static class RankReducer extends Reducer<LongWritable, Text, LongWritable, Text> {
        @Override
        protected void reduce(LongWritable key, Iterable<Text> values, Context ctx)
                throws IOException, InterruptedException {
            double sum = 0;
            String links = "";
            for (Text t : values) {
                String s = t.toString();
                if (s.charAt(0) == 'L') links = s.substring(1);
                else sum += Double.parseDouble(s.substring(1));
            }
            ctx.write(key, new Text((0.15 + 0.85 * sum) + "\t" + links));
        }
    }

    // ---------------------------------------------------------------- kmeans (one iteration)
    static double[][] parseCentroids(String text) {
        String[] rows = text.split(";");
        double[][] c = new double[rows.length][];
        for (int i = 0; i < rows.length; i++) {
            String[] v = rows[i].split(",");
            c[i] = new double[v.length];
            for (int d = 0; d < v.length; d++) c[i][d] = Double.parseDouble(v[d]);
        }
        return c;
    }

    public static class AssignMapper extends Mapper<LongWritable, Text, LongWritable, Text> {
        private double[][] centroids;

        @Override
        protected void setup(Context ctx) {
            centroids = parseCentroids(ctx.getConfiguration().get("harness.kmeans.centroids"));
        }

        @Override
        protected void map(LongWritable key, Text value, Context ctx)
                throws IOException, InterruptedException {
            String[] v = value.toString().split(",");
            int best = 0;
            double bestDist = Double.MAX_VALUE;
            for (int c = 0; c < centroids.length; c++) {
                double dist = 0;
                for (int d = 0; d < v.length; d++) {
                    double diff = Double.parseDouble(v[d]) - centroids[c][d];
                    dist += diff * diff;
                }
                if (dist < bestDist) { bestDist = dist; best = c; }
            }
            ctx.write(new LongWritable(best), new Text(value.toString() + ",1"));
        }
    }

    /** Sums coordinates and counts (the last field); usable as combiner. */
    public static class CentroidReducer extends Reducer<LongWritable, Text, LongWritable, Text> {
        @Override
        protected void reduce(LongWritable key, Iterable<Text> values, Context ctx)
                throws IOException, InterruptedException {
            double[] sum = null;
            for (Text t : values) {
                String[] v = t.toString().split(",");
                if (sum == null) sum = new double[v.length];
                for (int d = 0; d < v.length; d++) sum[d] += Double.parseDouble(v[d]);
            }
            StringBuilder out = new StringBuilder();
            for (int d = 0; d < sum.length; d++) {
                if (d > 0) out.append(',');
                out.append(sum[d]);
            }
            ctx.write(key, new Text(out.toString()));
        }
    }

    // ---------------------------------------------------------------- driver
    private double jobSeconds = 0;
    private int jobs = 0;

    private Job newJob(String name, Class<? extends Mapper> mapper, Class<? extends Reducer> reducer,
                       Class<?> keyClass, Class<?> valueClass, boolean combinable)
            throws IOException {
        Job job = Job.getInstance(getConf(), name);
        job.setJarByClass(HarnessMR.class);
        job.setMapperClass(mapper);
        job.setReducerClass(reducer);
        if (combinable && getConf().getBoolean("harness.combiner", true)) {
            job.setCombinerClass(reducer);
        }
        job.setOutputKeyClass(keyClass);
        job.setOutputValueClass(valueClass);
        return job;
    }

    private void runJob(Job job, Path out, Path... in) throws Exception {
        FileInputFormat.setInputPaths(job, in);
        FileOutputFormat.setOutputPath(job, out);
        long start = System.nanoTime();
        boolean ok = job.waitForCompletion(false);
        jobSeconds += (System.nanoTime() - start) / 1e9;
        jobs++;
        if (!ok) throw new IllegalStateException("MapReduce job " + job.getJobName() + " failed: "
            + job.getStatus().getFailureInfo());
    }

    private String readCentroids(File dir) throws IOException {
        double[][] c = new double[KMEANS_K][];
        for (File f : dir.listFiles((d, n) -> n.startsWith("part-"))) {
            for (String line : java.nio.file.Files.readAllLines(f.toPath())) {
                String[] kv = line.split("\t");
                String[] v = kv[1].split(",");
                double n = Double.parseDouble(v[v.length - 1]);
                double[] mean = new double[v.length - 1];
                for (int d = 0; d < mean.length; d++) mean[d] = Double.parseDouble(v[d]) / n;
                c[Integer.parseInt(kv[0])] = mean;
            }
        }
        StringBuilder s = new StringBuilder();
        for (int i = 0; i < KMEANS_K; i++) {
            if (c[i] == null) c[i] = new double[KMEANS_DIMS];  // empty cluster: restart at 0
            if (i > 0) s.append(';');
            for (int d = 0; d < c[i].length; d++) {
                if (d > 0) s.append(',');
                s.append(c[i][d]);
            }
        }
        return s.toString();
    }

    @Override
    public int run(String[] args) throws Exception {
        String mode = args[0], name = args[1];
        File data = new File(args[2]), out = new File(args[3]);
        double scale = Double.parseDouble(args[4]);
        long seed = Long.parseLong(args[5]);
        System.out.println("MR_STARTED");
        System.out.flush();
        long start = System.nanoTime();
        if (mode.equals("generate")) {
            generate(name, data, scale, seed);
            jobSeconds = (System.nanoTime() - start) / 1e9;
        } else {
            Path o = new Path(out.getAbsolutePath());
            switch (name) {
                case "wordcount":
                    runJob(newJob("wordcount", TokenMapper.class, SumReducer.class, Text.class,
                        LongWritable.class, true), new Path(o, "counts"), new Path(data + "/text"));
                    break;
                case "join": {
                    Job join = newJob("join", JoinMapper.class, JoinReducer.class, Text.class,
                        Text.class, false);
                    runJob(join, new Path(o, "joined"), new Path(data + "/rankings"),
                        new Path(data + "/uservisits"));
                    runJob(newJob("aggregate", RevenueMapper.class, RevenueReducer.class,
                        Text.class, Text.class, true), new Path(o, "revenue"), new Path(o, "joined"));
                    break;
                }
                case "pagerank": {
                    Path in = new Path(data + "/graph");
                    for (int i = 0; i < 2; i++) {
                        Path next = new Path(o, "ranks" + i);
                        runJob(newJob("pagerank-" + i, RankMapper.class, RankReducer.class,
                            LongWritable.class, Text.class, false), next, in);
                        in = next;
                    }
                    break;
                }
                case "kmeans": {
                    StringBuilder init = new StringBuilder();
                    for (int c = 0; c < KMEANS_K; c++) {  // deterministic start: centre c's mean + 1
                        if (c > 0) init.append(';');
                        for (int d = 0; d < KMEANS_DIMS; d++) {
                            if (d > 0) init.append(',');
                            init.append(c * 5.0 + 1.0);
                        }
                    }
                    String centroids = init.toString();
                    for (int i = 0; i < 3; i++) {
                        getConf().set("harness.kmeans.centroids", centroids);
                        Path next = new Path(o, "centroids" + i);
                        runJob(newJob("kmeans-" + i, AssignMapper.class, CentroidReducer.class,
                            LongWritable.class, Text.class, true), next, new Path(data + "/points"));
                        centroids = readCentroids(new File(next.toUri().getPath()));
                    }
                    break;
                }
                default:
                    throw new IllegalArgumentException("unknown job " + name);
            }
        }
        System.out.println(String.format(Locale.ROOT,
            "MR_RESULT {\"job_s\": %.4f, \"jobs\": %d}", jobSeconds, jobs));
        return 0;
    }

    public static void main(String[] args) throws Exception {
        System.exit(ToolRunner.run(new Configuration(), new HarnessMR(), args));
    }
}
