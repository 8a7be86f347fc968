// SPDX-License-Identifier: MIT
/*
 * argusd as systemd sees it: READY=1 only once the API answers, WATCHDOG=1
 * at half of WATCHDOG_USEC, STOPPING=1 and a clean exit on SIGTERM. The
 * test plays the service manager's notify socket.
 */
#include <sys/socket.h>
#include <sys/un.h>

#include "tests/daemon-harness.h"
#include "tests/tap.h"

static int notify_fd = -1;

static int notify_socket(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -errno;
	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	memcpy(sa.sun_path, path, strlen(path) + 1);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return -errno;
	return fd;
}

/* Next datagram within timeout_ms, into buf; 0 on timeout. */
static ssize_t next_message(char *buf, size_t len, int timeout_ms)
{
	struct pollfd p = { .fd = notify_fd, .events = POLLIN };
	ssize_t n;

	if (poll(&p, 1, timeout_ms) <= 0)
		return 0;
	n = recv(notify_fd, buf, len - 1, 0);
	if (n < 0)
		return 0;
	buf[n] = 0;
	return n;
}

int main(void)
{
	struct daemon d;
	struct http_reply r;
	char sock[sizeof(((struct sockaddr_un *)0)->sun_path)], msg[4096];
	bool ready = false, stopping = false;
	int watchdogs = 0, status;
	uint64_t t0;

	if (geteuid() != 0)
		tap_skip_all("test-notify needs root");
	curl_global_init(CURL_GLOBAL_DEFAULT);
	REQUIRE(daemon_prepare(&d, NULL) == 0);
	REQUIRE(strlen(d.dir) + sizeof("/notify") <= sizeof(sock));
	memcpy(sock, d.dir, strlen(d.dir));
	memcpy(sock + strlen(d.dir), "/notify", sizeof("/notify"));
	notify_fd = notify_socket(sock);
	REQUIRE(notify_fd >= 0);
	setenv("NOTIFY_SOCKET", sock, 1);
	setenv("WATCHDOG_USEC", "400000", 1);

	REQUIRE(daemon_start(&d) == 0);
	/* READY=1 arrives, and by then the API answers */
	t0 = now_mono_ns();
	while (!ready && now_mono_ns() - t0 < 30ull * 1000000000ull) {
		if (next_message(msg, sizeof(msg), 1000) && strstr(msg, "READY=1")) {
			ready = true;
			CHECKF(strstr(msg, "STATUS=") != NULL, "READY without STATUS: %s", msg);
		}
	}
	CHECK(ready);
	CHECK(http_get(&d, "/healthz", &r) == 200);
	reply_free(&r);

	/* WATCHDOG=1 at half the interval: about five in a second */
	t0 = now_mono_ns();
	while (now_mono_ns() - t0 < 1000000000ull)
		if (next_message(msg, sizeof(msg), 100) && strstr(msg, "WATCHDOG=1"))
			watchdogs++;
	CHECKF(watchdogs >= 3 && watchdogs <= 8, "%d watchdog pings in 1 s", watchdogs);

	/* SIGTERM: STOPPING=1 and a clean exit */
	kill(d.pid, SIGTERM);
	t0 = now_mono_ns();
	while (!stopping && now_mono_ns() - t0 < 10ull * 1000000000ull)
		if (next_message(msg, sizeof(msg), 500) && strstr(msg, "STOPPING=1"))
			stopping = true;
	CHECK(stopping);
	status = daemon_stop(&d, SIGTERM);
	CHECKF(status == 0, "exit status %d", status);

	close(notify_fd);
	daemon_cleanup(&d);
	curl_global_cleanup();
	return tap_done("test-notify");
}
