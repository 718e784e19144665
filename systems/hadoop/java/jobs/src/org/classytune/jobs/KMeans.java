package org.classytune.jobs;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.conf.Configured;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.io.IntWritable;
import org.apache.hadoop.io.LongWritable;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.mapreduce.Job;
import org.apache.hadoop.mapreduce.Mapper;
import org.apache.hadoop.mapreduce.Reducer;
import org.apache.hadoop.mapreduce.lib.input.FileInputFormat;
import org.apache.hadoop.mapreduce.lib.output.FileOutputFormat;
import org.apache.hadoop.util.Tool;
import org.apache.hadoop.util.ToolRunner;

/**
 * Lloyd's k-means, one MapReduce job per iteration (as Mahout's KMeansDriver, which HiBench
 * runs, does it).
 *
 * <p>Points are lines of comma-separated numbers. The centres travel in the job configuration
 * (k × d numbers, small); the map assigns each point to its nearest centre and emits {@code
 * (centre, "count;sum1,sum2,...")}, a combiner adds those up per map task, and the reduce writes
 * each centre's new position. The driver reads the new centres from HDFS and stops after
 * {@code iterations} jobs or once no centre moved more than {@code delta}. The first centres are
 * the first k points of the input, so a run is deterministic for given data.
 *
 * <p>Usage: {@code KMeans [-D k=v]... <input> <work folder> <k> <iterations> <delta>}. Per
 * iteration one line goes to stdout: {@code KMEANS iteration <i> <seconds> <largest shift>}.
 */
public final class KMeans extends Configured implements Tool {
  static final String CENTRES = "classytune.kmeans.centres";

  static double[][] parse(String text) {
    String[] rows = text.split(";");
    double[][] centres = new double[rows.length][];
    for (int i = 0; i < rows.length; i++) {
      centres[i] = point(rows[i]);
    }
    return centres;
  }

  static double[] point(String line) {
    String[] parts = line.trim().split(",");
    double[] p = new double[parts.length];
    for (int i = 0; i < parts.length; i++) {
      p[i] = Double.parseDouble(parts[i]);
    }
    return p;
  }

  static String format(double[] p) {
    StringBuilder text = new StringBuilder();
    for (int i = 0; i < p.length; i++) {
      text.append(i == 0 ? "" : ",").append(p[i]);
    }
    return text.toString();
  }

  /** Each point to its nearest centre, as "1;coordinates". */
  public static final class AssignMapper extends Mapper<LongWritable, Text, IntWritable, Text> {
    private double[][] centres;
    private final IntWritable nearest = new IntWritable();
    private final Text value = new Text();

    @Override
    protected void setup(Context context) {
      centres = parse(context.getConfiguration().get(CENTRES));
    }

    @Override
    protected void map(LongWritable offset, Text line, Context context)
        throws IOException, InterruptedException {
      if (line.getLength() == 0) {
        return;
      }
      double[] p = point(line.toString());
      int best = 0;
      double bestDistance = Double.MAX_VALUE;
      for (int c = 0; c < centres.length; c++) {
        double distance = 0;
        for (int i = 0; i < p.length; i++) {
          double d = p[i] - centres[c][i];
          distance += d * d;
        }
        if (distance < bestDistance) {
          best = c;
          bestDistance = distance;
        }
      }
      nearest.set(best);
      value.set("1;" + line);
      context.write(nearest, value);
    }
  }

  /** Adds "count;sums" values up: the combiner, and the first half of the reducer. */
  static String add(Iterable<Text> values) {
    long count = 0;
    double[] sum = null;
    for (Text value : values) {
      String[] parts = value.toString().split(";", 2);
      double[] p = point(parts[1]);
      if (sum == null) {
        sum = new double[p.length];
      }
      for (int i = 0; i < p.length; i++) {
        sum[i] += p[i];
      }
      count += Long.parseLong(parts[0]);
    }
    return count + ";" + format(sum);
  }

  /** Partial sums of one map task's points per centre. */
  public static final class SumCombiner extends Reducer<IntWritable, Text, IntWritable, Text> {
    private final Text value = new Text();

    @Override
    protected void reduce(IntWritable centre, Iterable<Text> values, Context context)
        throws IOException, InterruptedException {
      value.set(add(values));
      context.write(centre, value);
    }
  }

  /** A centre's new position: the mean of its points. */
  public static final class MeanReducer extends Reducer<IntWritable, Text, IntWritable, Text> {
    private final Text value = new Text();

    @Override
    protected void reduce(IntWritable centre, Iterable<Text> values, Context context)
        throws IOException, InterruptedException {
      String[] parts = add(values).split(";", 2);
      long count = Long.parseLong(parts[0]);
      double[] mean = point(parts[1]);
      for (int i = 0; i < mean.length; i++) {
        mean[i] /= count;
      }
      value.set(format(mean));
      context.write(centre, value);
    }
  }

  static double[][] firstPoints(FileSystem fs, Path input, int k) throws IOException {
    List<double[]> points = new ArrayList<>();
    for (FileStatus file : fs.listStatus(input)) {
      if (!file.isFile() || file.getPath().getName().startsWith("_")) {
        continue;
      }
      try (BufferedReader reader =
          new BufferedReader(new InputStreamReader(fs.open(file.getPath()), StandardCharsets.UTF_8))) {
        String line;
        while (points.size() < k && (line = reader.readLine()) != null) {
          if (!line.isEmpty()) {
            points.add(point(line));
          }
        }
      }
      if (points.size() == k) {
        break;
      }
    }
    if (points.size() < k) {
      throw new IOException("KMeans: the input has fewer than k=" + k + " points");
    }
    return points.toArray(new double[0][]);
  }

  static double[][] readCentres(FileSystem fs, Path output, double[][] previous) throws IOException {
    double[][] centres = previous.clone();  // a centre that lost all its points stays put
    for (FileStatus file : fs.listStatus(output)) {
      if (!file.getPath().getName().startsWith("part-")) {
        continue;
      }
      try (BufferedReader reader =
          new BufferedReader(new InputStreamReader(fs.open(file.getPath()), StandardCharsets.UTF_8))) {
        String line;
        while ((line = reader.readLine()) != null) {
          String[] parts = line.split("\t", 2);
          centres[Integer.parseInt(parts[0])] = point(parts[1]);
        }
      }
    }
    return centres;
  }

  static String join(double[][] centres) {
    StringBuilder text = new StringBuilder();
    for (int c = 0; c < centres.length; c++) {
      text.append(c == 0 ? "" : ";").append(format(centres[c]));
    }
    return text.toString();
  }

  @Override
  public int run(String[] args) throws Exception {
    if (args.length != 5) {
      System.err.println("usage: KMeans [-D k=v]... <input> <work folder> <k> <iterations> <delta>");
      return 1;
    }
    Path input = new Path(args[0]);
    Path work = new Path(args[1]);
    int k = Integer.parseInt(args[2]);
    int iterations = Integer.parseInt(args[3]);
    double delta = Double.parseDouble(args[4]);
    Configuration conf = getConf();
    FileSystem fs = work.getFileSystem(conf);
    fs.delete(work, true);
    double[][] centres = firstPoints(fs, input, k);
    for (int i = 1; i <= iterations; i++) {
      conf.set(CENTRES, join(centres));
      Path output = new Path(work, "iteration-" + i);
      Job job = Job.getInstance(conf, "KMeans iteration " + i + " of at most " + iterations);
      job.setJarByClass(KMeans.class);
      job.setMapperClass(AssignMapper.class);
      job.setCombinerClass(SumCombiner.class);
      job.setReducerClass(MeanReducer.class);
      job.setOutputKeyClass(IntWritable.class);
      job.setOutputValueClass(Text.class);
      FileInputFormat.addInputPath(job, input);
      FileOutputFormat.setOutputPath(job, output);
      long began = System.nanoTime();
      if (!job.waitForCompletion(false)) {
        System.err.println("ERROR: KMeans iteration " + i + " failed: " + job.getStatus());
        return 2;
      }
      double[][] next = readCentres(fs, output, centres);
      double shift = 0;
      for (int c = 0; c < k; c++) {
        double d = 0;
        for (int j = 0; j < next[c].length; j++) {
          d += (next[c][j] - centres[c][j]) * (next[c][j] - centres[c][j]);
        }
        shift = Math.max(shift, Math.sqrt(d));
      }
      centres = next;
      System.out.printf(
          "KMEANS iteration %d %.3f %.6f%n", i, (System.nanoTime() - began) / 1e9, shift);
      if (shift <= delta) {
        break;
      }
    }
    return 0;
  }

  public static void main(String[] args) throws Exception {
    System.exit(ToolRunner.run(new Configuration(), new KMeans(), args));
  }
}
