<?php
// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// The page php-fpm serves in tests/e2e/php_fpm.sh: CPU work in named PHP
// functions, some 5-20 ms a request, so a profile of the workers shows each
// request's PHP frames over php-fpm's own. {main} calls render (a table built
// as a string, a row at a time by a method, Table::row) and checksum (chained
// SHA-256 digests through the internal function hash). The body ends with
// "checksum HEX rows N", which the test reads to know a request was served.

final class Table
{
	private string $uri;

	public function __construct(string $uri)
	{
		$this->uri = $uri;
	}

	// One row: formatting, escaping and repeating in PHP's string functions.
	public function row(int $i): string
	{
		$cells = [];
		for ($c = 0; $c < 8; $c++) {
			$cells[] = '<td>' . htmlspecialchars($this->uri . '#' . ($i * 8 + $c)) . '</td>';
		}
		return '<tr>' . implode('', $cells) . '</tr>' . str_repeat(' ', $i % 7) . "\n";
	}
}

function render(string $uri, int $rows): string
{
	$table = new Table($uri);
	$out = '';
	for ($i = 0; $i < $rows; $i++) {
		$out .= $table->row($i);
	}
	return $out;
}

function checksum(string $body, int $rounds): string
{
	$h = '';
	for ($i = 0; $i < $rounds; $i++) {
		$h = hash('sha256', $h . $body);
	}
	return $h;
}

$rows = (int)($_GET['rows'] ?? 1500);
$body = render($_SERVER['REQUEST_URI'] ?? 'cli', $rows);
$sum = checksum($body, (int)($_GET['rounds'] ?? 5));
header('Content-Type: text/plain');
echo strlen($body), " bytes\n";
echo "checksum $sum rows $rows\n";
