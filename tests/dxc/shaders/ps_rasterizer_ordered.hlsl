// Rasterizer-ordered views bind as their RW siblings (u registers); WGSL has none.
RasterizerOrderedByteAddressBuffer counts : register(u0);
RasterizerOrderedStructuredBuffer<float4> accum : register(u1);
RasterizerOrderedTexture2D<float4> image : register(u2);

float4 main(float4 position : SV_Position) : SV_Target
{
    uint2 pixel = uint2(position.xy);
    uint n = counts.Load(0);
    counts.Store(0, n + 1);
    accum[pixel.x] = accum[pixel.x] + image[pixel];
    image[pixel] = accum[pixel.x];
    return float4(n, 0, 0, 1);
}
