package org.classytune.jobs;

import java.io.IOException;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.conf.Configured;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
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
 * PageRank by power iteration, one MapReduce job per iteration (as Pegasus, which HiBench runs,
 * does it).
 *
 * <p>A line of the graph is {@code node<TAB>rank<TAB>out1,out2,...} (no links: an empty third
 * field). The map sends each node's rank, split evenly, to its out-links and passes the node's
 * links on; the reduce sums what a node received into {@code (1 - d) / N + d * sum} and writes
 * the line again, so an iteration's output is the next one's input. Dangling nodes' rank is
 * dropped, as in the original formulation. Each job goes through {@link ToolRunner}, so {@code
 * -D key=value} options (the tuned MapReduce settings) reach every iteration.
 *
 * <p>Usage: {@code PageRank [-D k=v]... <input> <work folder> <nodes> <iterations>}; the final
 * ranks are in {@code <work folder>/iteration-<iterations>}. One line per iteration goes to
 * stdout: {@code PAGERANK iteration <i> <seconds>}.
 */
public final class PageRank extends Configured implements Tool {
  static final String NODES = "classytune.pagerank.nodes";
  static final double DAMPING = 0.85;

  /** Contributions to the out-links ("r:value") and the node's own links ("l:links"). */
  public static final class SpreadMapper extends Mapper<LongWritable, Text, Text, Text> {
    private final Text node = new Text();
    private final Text value = new Text();

    @Override
    protected void map(LongWritable offset, Text line, Context context)
        throws IOException, InterruptedException {
      String[] fields = line.toString().split("\t", -1);
      if (fields.length < 3) {
        context.getCounter("pagerank", "malformed lines").increment(1);
        return;
      }
      String links = fields[2];
      node.set(fields[0]);
      value.set("l:" + links);
      context.write(node, value);
      if (links.isEmpty()) {
        return;
      }
      String[] out = links.split(",");
      value.set("r:" + (Double.parseDouble(fields[1]) / out.length));
      for (String target : out) {
        node.set(target);
        context.write(node, value);
      }
    }
  }

  /** A node's new rank from what it received; its links unchanged. */
  public static final class SumReducer extends Reducer<Text, Text, Text, Text> {
    private final Text line = new Text();
    private long nodes;

    @Override
    protected void setup(Context context) {
      nodes = context.getConfiguration().getLong(NODES, 1);
    }

    @Override
    protected void reduce(Text node, Iterable<Text> values, Context context)
        throws IOException, InterruptedException {
      double sum = 0;
      String links = "";
      for (Text value : values) {
        String text = value.toString();
        if (text.startsWith("r:")) {
          sum += Double.parseDouble(text.substring(2));
        } else {
          links = text.substring(2);
        }
      }
      double rank = (1 - DAMPING) / nodes + DAMPING * sum;
      line.set(rank + "\t" + links);
      context.write(node, line);
    }
  }

  @Override
  public int run(String[] args) throws Exception {
    if (args.length != 4) {
      System.err.println("usage: PageRank [-D k=v]... <input> <work folder> <nodes> <iterations>");
      return 1;
    }
    Path input = new Path(args[0]);
    Path work = new Path(args[1]);
    long nodes = Long.parseLong(args[2]);
    int iterations = Integer.parseInt(args[3]);
    Configuration conf = getConf();
    conf.setLong(NODES, nodes);
    FileSystem fs = work.getFileSystem(conf);
    fs.delete(work, true);
    for (int i = 1; i <= iterations; i++) {
      Path output = new Path(work, "iteration-" + i);
      Job job = Job.getInstance(conf, "PageRank iteration " + i + " of " + iterations);
      job.setJarByClass(PageRank.class);
      job.setMapperClass(SpreadMapper.class);
      job.setReducerClass(SumReducer.class);
      job.setOutputKeyClass(Text.class);
      job.setOutputValueClass(Text.class);
      FileInputFormat.addInputPath(job, input);
      FileOutputFormat.setOutputPath(job, output);
      long began = System.nanoTime();
      if (!job.waitForCompletion(false)) {
        System.err.println("ERROR: PageRank iteration " + i + " failed: " + job.getStatus());
        return 2;
      }
      System.out.printf("PAGERANK iteration %d %.3f%n", i, (System.nanoTime() - began) / 1e9);
      input = output;
    }
    return 0;
  }

  public static void main(String[] args) throws Exception {
    System.exit(ToolRunner.run(new Configuration(), new PageRank(), args));
  }
}
