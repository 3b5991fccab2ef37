// Reads a texture through a sampler and writes a storage texture: the bind group layout entries
// for both kinds of texture and the sampler come from the bindings.
[[vk::image_format("rgba8")]] RWTexture2D<float4> Image;
Texture2D<float4> Source;
SamplerState Nearest;

[shader("compute")]
[numthreads(4, 4, 1)]
void Main(uint3 id : SV_DispatchThreadID)
{
    float2 uv = (float2(id.xy) + 0.5) / 8.0;
    float4 texel = Source.SampleLevel(Nearest, uv, 0);
    Image[id.xy] = float4(texel.b, texel.g, texel.r, 1.0);
}
