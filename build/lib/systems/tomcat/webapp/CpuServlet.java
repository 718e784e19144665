// CPU-bound page of the harness's Tomcat test application: a deterministic integer mix
// (xorshift rounds) whose cost scales with ?n=, answered with a short text summary.
package harness;

import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.PrintWriter;

public class CpuServlet extends HttpServlet {
    private static final int DEFAULT_ROUNDS = 20000;

    @Override
    protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
        int rounds = DEFAULT_ROUNDS;
        String n = req.getParameter("n");
        if (n != null) {
            try {
                rounds = Math.max(1, Math.min(10_000_000, Integer.parseInt(n)));
            } catch (NumberFormatException ignored) {
                resp.sendError(400, "n must be an integer");
                return;
            }
        }
        long x = 88172645463325252L ^ rounds;
        long sum = 0;
        for (int i = 0; i < rounds; i++) {
            x ^= x << 13;
            x ^= x >>> 7;
            x ^= x << 17;
            sum += x & 1023;
        }
        resp.setContentType("text/plain;charset=UTF-8");
        PrintWriter out = resp.getWriter();
        out.println("rounds=" + rounds + " checksum=" + sum);
        for (int line = 0; line < 40; line++) {
            out.println("line " + line + ": " + Long.toHexString(x + line));
        }
    }
}
