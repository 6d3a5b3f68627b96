<?php
// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// A small PHP service for docs/runtimes.md's PHP example: requests handled
// in PHP (Cart::render: string building), with C underneath (Cart::checksum:
// hash('sha256'); parse: json_decode) and a callback C runs (usort's
// comparison, a closure).
//
// usage: php demo.php [SECONDS]

class Cart
{
	private array $items;

	function __construct(int $n)
	{
		$this->items = [];
		for ($i = 0; $i < $n; $i++)
			$this->items[] = ['id' => $i, 'name' => 'item' . ($i * 7919 % 1000), 'price' => ($i * 37 % 101) / 7.0];
	}

	function render(): string
	{
		$out = '';
		foreach ($this->items as $it)
			$out .= sprintf("%-8d %-20s %8.3f\n", $it['id'], $it['name'], $it['price']);
		return $out;
	}

	function checksum(string $page): string
	{
		return hash('sha256', str_repeat($page, 32));
	}

	function ranked(): array
	{
		$items = $this->items;
		usort($items, function ($a, $b) { return $b['price'] <=> $a['price'] ?: strcmp($a['name'], $b['name']); });
		return array_slice($items, 0, 10);
	}
}

function parse(string $json): float
{
	return array_sum(array_column(json_decode($json, true), 'price'));
}

function handle_request(Cart $cart, string $json): array
{
	$page = $cart->render();
	return [$cart->checksum($page), parse($json), $cart->ranked()];
}

$seconds = (float)($argv[1] ?? 30);
$cart = new Cart(400);
$json = json_encode($cart->ranked());
$stop = hrtime(true) + (int)($seconds * 1e9);
while (hrtime(true) < $stop)
	handle_request($cart, $json);
